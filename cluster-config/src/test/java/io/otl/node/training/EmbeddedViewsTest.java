package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.api.RefusedException;
import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.entity.Rejection;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Design §7.3: the embedding handle offers "the coordinator/model views" besides the DataCollector
 * and the ModelRouter, and §3.2 a manual trigger from Java. The handle had only the first two, so an
 * agent embedding a node (HTTP off) could record sessions but neither see its training pool and
 * jobs, nor trigger, nor read or move its model versions.
 */
class EmbeddedViewsTest {
  private static final String AGENT = "embedded-views";
  private static SimulatedTrinity trinity;

  @BeforeAll
  static void startSimulator() throws Exception {
    trinity = SimulatedTrinity.start("otl-embedded-views-");
  }

  @AfterAll
  static void stopSimulator() {
    if (trinity != null) trinity.close();
  }

  @Test
  void anEmbeddedAgentReadsItsTrainingAndModelsAndTriggersWithoutHttp() throws Exception {
    var config = trinity.node(2, Map.of(
        "agentscope.training.http.enabled", false,
        "agentscope.training.training-runner.trigger.type", "manual",
        "agentscope.model.base-url", "http://127.0.0.1:9/v1",
        "agentscope.model.model-name", "base-model"));
    try (TrainingNode node = TrainingNode.start(config)) {
      assertEquals(-1, node.httpPort(), "the views must work with HTTP off");
      var coordinators = node.trainingCoordinators();
      var models = node.modelVersions();

      // Unknown agents: empty views and NOT_FOUND refusals, as the HTTP API's 404s.
      assertEquals(Optional.empty(), get(coordinators.status(AGENT)));
      assertEquals(Rejection.Kind.NOT_FOUND, refusal(coordinators.trigger(AGENT)).kind());
      assertEquals(Optional.empty(), get(coordinators.job("job-1-" + AGENT)));
      assertTrue(get(coordinators.jobs(AGENT)).isEmpty());
      assertEquals(Optional.empty(), get(models.versions(AGENT)));
      assertEquals(Rejection.Kind.NOT_FOUND, refusal(models.promote(AGENT, "v1")).kind());
      assertInstanceOf(IllegalArgumentException.class, failure(coordinators.status("not an id")));

      for (int i = 0; i < 2; i++) {
        String session = "embedded-views-s" + i;
        get(node.dataCollector().record(session, AGENT,
            new SessionInput.Message("u", null, "user", "question " + i, null, null),
            new SessionInput.Message("a", null, "assistant", "answer " + i, null, 400L),
            new SessionInput.Feedback("f", null, "RATING", 5.0, "fb-" + i, "test"),
            new SessionInput.Result("r", null, "SUCCESS", null)));
      }
      TrainingCoordinator.CoordinatorView status = awaitPool(coordinators, 2);
      assertEquals(AGENT, status.agentId());
      assertEquals(2, status.minSamples());
      assertTrue(status.triggers().contains("manual"), status.toString());

      TrainingCoordinator.TriggerAccepted job = get(coordinators.trigger(AGENT));
      assertEquals("job-1-" + AGENT, job.jobId(), job.toString());
      assertTrue(job.preflightFailures() == null || job.preflightFailures().isEmpty(), job.toString());
      assertEquals(Rejection.Kind.CONFLICT, refusal(coordinators.trigger(AGENT)).kind(),
          "a second trigger while the job is active is refused");
      TrainingCoordinator.JobView view = get(coordinators.job(job.jobId())).orElseThrow();
      assertEquals("manual", view.trigger(), view.toString());
      assertEquals(job.jobId(), get(coordinators.jobs(AGENT)).get(0).jobId());
      assertEquals(job.jobId(), get(coordinators.cancel(job.jobId())).jobId());

      // The router registers v0 (the configured base model); the model view shows it STABLE.
      assertEquals("v0", get(node.modelRouter().route(AGENT, "embedded-views-s9")).version());
      ModelVersion.ModelsView versions = get(models.versions(AGENT)).orElseThrow();
      assertEquals("v0", versions.stable(), versions.toString());
      assertEquals("STABLE", versions.versions().get(0).state().name());
      RefusedException promoteStable = refusal(models.promote(AGENT, "v0"));
      assertEquals(Rejection.Kind.INVALID_TRANSITION, promoteStable.kind(), promoteStable.getMessage());
      assertFalse(promoteStable.getMessage().isBlank());
    }
  }

  private static TrainingCoordinator.CoordinatorView awaitPool(
      io.otl.core.api.TrainingCoordinators coordinators, int size) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    Optional<TrainingCoordinator.CoordinatorView> last = Optional.empty();
    while (System.nanoTime() < deadline) {
      last = get(coordinators.status(AGENT));
      if (last.isPresent() && last.get().poolSize() >= size) return last.get();
      Thread.sleep(200);
    }
    throw new AssertionError("the coordinator never pooled " + size + " trajectories; last: " + last);
  }

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static Throwable failure(CompletionStage<?> stage) {
    ExecutionException e = assertThrows(ExecutionException.class, () -> get(stage));
    return e.getCause();
  }

  private static RefusedException refusal(CompletionStage<?> stage) {
    return assertInstanceOf(RefusedException.class, failure(stage));
  }
}
