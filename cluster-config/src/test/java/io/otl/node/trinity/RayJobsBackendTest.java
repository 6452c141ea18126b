package io.otl.node.trinity;

import static io.otl.node.trinity.TestHttp.await;
import static io.otl.node.trinity.TestHttp.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.training.BackendJobStatus;
import io.otl.core.training.BackendJobStatus.State;
import io.otl.core.training.BackendSubmission;
import io.otl.core.training.TrainingBackendException;
import io.otl.core.training.TrainingJobSpec;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.Http;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The Ray Jobs client against the simulator over loopback HTTP. */
class RayJobsBackendTest {

  private static final Duration LIMIT = Duration.ofSeconds(20);
  private static final AtomicInteger ids = new AtomicInteger();

  private static ActorTestKit testKit;
  private static TrinitySimulator simulator;
  private static RayJobsBackend backend;
  private static Path workDir;

  @BeforeAll
  static void start() throws IOException {
    testKit = ActorTestKit.create("RayJobsBackendTest");
    workDir = Files.createTempDirectory("ray-jobs-test");
    simulator =
        TrinitySimulator.start(
            testKit.system(),
            SimulatorSettings.defaults()
                .withPort(0)
                .withWorkDir(workDir.resolve("sim"))
                .withDurations(Duration.ofMillis(150), Duration.ofMillis(300)));
    backend = new RayJobsBackend(testKit.system(), RayJobsSettings.of(TrinityEndpoint.of(simulator.baseUrl())));
  }

  @AfterAll
  static void stop() {
    simulator.stop();
    join(Http.get(testKit.system()).shutdownAllConnectionPools().thenApply(done -> true));
    testKit.shutdownTestKit();
  }

  @Test
  void submittedJobSucceedsWithHuggingfaceCheckpointAndMetrics() throws IOException {
    TrainingJobSpec spec = spec(Map.of("metric.task-success-rate", "0.91"));

    BackendSubmission submission = join(backend.submit(spec));
    BackendJobStatus done = awaitTerminal(spec.jobId());

    assertEquals(spec.jobId(), submission.externalId());
    assertEquals(State.SUCCEEDED, done.state(), done.message());
    Path hf = Path.of(URI.create(done.outputModel().checkpointUri()));
    assertTrue(Files.isDirectory(hf), "checkpoint folder exists: " + hf);
    // epochs = 3 → the simulator trains 30 steps; the half-way step 15 must not be chosen
    assertEquals(
        TrinityConfigRenderer.checkpointJobDir(spec).resolve("global_step_30/actor/huggingface"), hf);
    assertTrue(Files.isRegularFile(hf.resolve("config.json")));
    assertEquals(0.91, done.outputModel().metrics().get("task-success-rate"));
    assertEquals(0.78, done.outputModel().metrics().get("user-satisfaction"));
    assertTrue(done.outputModel().metrics().get("response-latency") > 0);
    assertTrue(Files.isRegularFile(TrinityConfigRenderer.configPath(spec)), "config written next to the dataset");
    assertTrue(join(backend.logs(spec.jobId())).contains("SUCCEEDED"));
  }

  @Test
  void submittingTheSameJobTwiceCreatesOneJob() {
    TrainingJobSpec spec = spec(Map.of());

    BackendSubmission first = join(backend.submit(spec));
    BackendSubmission second = join(backend.submit(spec));

    assertEquals(first, second);
    JsonNode counts = stats().path("submissions").path(spec.jobId());
    assertEquals(1, counts.path("accepted").asInt(), counts.toString());
    assertEquals(1, counts.path("duplicates").asInt(), counts.toString());
    assertEquals(State.SUCCEEDED, awaitTerminal(spec.jobId()).state());
  }

  /**
   * A Ray job with this submission id that the node did not submit (another client's, or one of an earlier
   * journal of the same agent: job ids restart at job-1 on a new database while the Ray cluster keeps its
   * jobs) was taken for this job's own earlier submission: the coordinator recorded it "accepted by the
   * backend" and then that job's outcome and checkpoint as its own (trial trial-loop: `ray job submit
   * --submission-id job-8-loop2 -- echo hi`, then job-8-loop2 ended FAILED with echo's error). Refused now,
   * for good, naming the id; the same submission sent again is still one job.
   */
  @Test
  void aJobOfThisIdThatTheNodeDidNotSubmitIsNotTakenForItsOwn() {
    TrainingJobSpec foreign = spec(Map.of("datasetSha256", "aaaa"));
    assertEquals(200, TestHttp.post(simulator.baseUrl() + "/api/jobs/", "{\"entrypoint\":\"echo hi\",\"submission_id\":\""
        + foreign.jobId() + "\"}").statusCode());
    TrainingBackendException e = failure(backend.submit(foreign));
    assertEquals(TrainingBackendException.Kind.REJECTED, e.kind(), e.getMessage());
    assertTrue(e.getMessage().contains(foreign.jobId()) && e.getMessage().contains("not submitted by this node"),
        e.getMessage());

    TrainingJobSpec earlierJournal = spec(Map.of("datasetSha256", "bbbb"));
    join(backend.submit(earlierJournal));
    TrainingJobSpec sameIdOtherData = new TrainingJobSpec(earlierJournal.jobId(), earlierJournal.agentId(),
        earlierJournal.algorithm(), earlierJournal.baseModel(), earlierJournal.hyperparams(), earlierJournal.datasetPath(),
        earlierJournal.checkpointRootDir(), Map.of("datasetSha256", "cccc"));
    TrainingBackendException other = failure(backend.submit(sameIdOtherData));
    assertEquals(TrainingBackendException.Kind.REJECTED, other.kind(), other.getMessage());
    assertTrue(other.getMessage().contains("another dataset"), other.getMessage());

    assertEquals(earlierJournal.jobId(), join(backend.submit(earlierJournal)).externalId(), "a repeat is still one job");
  }

  @Test
  void onlyARefusalNamingThisJobIdIsARepeat() {
    String headTrace = "Traceback (most recent call last):\nRuntimeError: Request failed with status code 400: "
        + "Traceback (most recent call last):\nValueError: Job with submission_id job-7-a already exists. "
        + "Please use a different submission_id.\n.";
    assertTrue(RayJobsBackend.isDuplicate(new JsonHttpClient.Reply(500, headTrace), "job-7-a"));
    assertTrue(RayJobsBackend.isDuplicate(new JsonHttpClient.Reply(400, headTrace), "job-7-a"));
    // job-7 is a prefix of job-7-a, not the same job; a busy head is a failure to retry.
    assertFalse(RayJobsBackend.isDuplicate(new JsonHttpClient.Reply(500, headTrace), "job-7"));
    assertFalse(RayJobsBackend.isDuplicate(
        new JsonHttpClient.Reply(500, "No available agent to submit job, please try again later."), "job-7-a"));
  }

  @Test
  void concurrentRepeatedSubmissionsCreateOneJob() {
    TrainingJobSpec spec = spec(Map.of());
    List<CompletableFuture<BackendSubmission>> all = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      all.add(backend.submit(spec).toCompletableFuture());
    }
    all.forEach(f -> assertEquals(spec.jobId(), join(f).externalId()));
    assertEquals(1, stats().path("submissions").path(spec.jobId()).path("accepted").asInt());
  }

  @Test
  void jobFailsOnRequestWithMessage() {
    TrainingJobSpec spec = spec(Map.of("simulate", "fail"));
    join(backend.submit(spec));

    BackendJobStatus done = awaitTerminal(spec.jobId());

    assertEquals(State.FAILED, done.state());
    assertTrue(done.message().contains("simulated training failure"), done.message());
    assertNull(done.outputModel());
  }

  @Test
  void jobFailedThroughAdminEndpointReportsFailed() {
    TrainingJobSpec spec = spec(Map.of());
    join(backend.submit(spec));

    assertEquals(200, TestHttp.post(simulator.baseUrl() + "/simulator/jobs/" + spec.jobId() + "/fail", null).statusCode());

    BackendJobStatus status = join(backend.status(spec.jobId()));
    assertEquals(State.FAILED, status.state());
    assertTrue(status.message().contains("failure injected"), status.message());
  }

  @Test
  void cancelledJobIsStopped() {
    TrainingJobSpec spec = spec(Map.of());
    join(backend.submit(spec));

    join(backend.cancel(spec.jobId()));
    BackendJobStatus status = awaitTerminal(spec.jobId());
    // Ray answers {"stopped": false} for an ended job: nothing was stopped, so the stop is refused
    // (the coordinator then polls how the job ended; it may have SUCCEEDED, CancelAfterTheRunEndedTest).
    ExecutionException refused = assertThrows(ExecutionException.class,
        () -> backend.cancel(spec.jobId()).toCompletableFuture().get(20, TimeUnit.SECONDS));
    TrainingBackendException cause = assertInstanceOf(TrainingBackendException.class, refused.getCause());
    assertEquals(TrainingBackendException.Kind.REJECTED, cause.kind());
    assertTrue(cause.getMessage().contains("already ended"), cause.getMessage());

    assertEquals(State.STOPPED, status.state());
    assertNull(status.outputModel());
  }

  @Test
  void succeededJobWithoutCheckpointIsReportedFailed() {
    TrainingJobSpec spec = spec(Map.of("simulate", "no-checkpoint"));
    join(backend.submit(spec));

    BackendJobStatus done = awaitTerminal(spec.jobId());

    assertEquals(State.FAILED, done.state());
    assertTrue(done.message().contains("no Hugging Face checkpoint"), done.message());
  }

  @Test
  void unknownJobFailsWithNotFound() {
    TrainingBackendException e = failure(backend.status("no-such-job"));
    assertEquals(TrainingBackendException.Kind.NOT_FOUND, e.kind());
    assertEquals(404, e.statusCode());
    assertTrue(e.getMessage().contains("GET /api/jobs/no-such-job"), e.getMessage());
    assertTrue(e.getMessage().contains("404"), e.getMessage());
    assertTrue(e.getMessage().contains("does not exist"), e.getMessage());
    assertEquals(TrainingBackendException.Kind.NOT_FOUND, failure(backend.cancel("no-such-job")).kind());
    assertEquals(TrainingBackendException.Kind.NOT_FOUND, failure(backend.logs("no-such-job")).kind());
  }

  @Test
  void unreachableRayHeadFailsWithConnectionRefused() {
    RayJobsBackend dead =
        new RayJobsBackend(
            testKit.system(),
            RayJobsSettings.of(TrinityEndpoint.of("http://127.0.0.1:" + TestHttp.freePort())));

    TrainingBackendException e = failure(dead.submit(spec(Map.of())));

    assertEquals(TrainingBackendException.Kind.UNAVAILABLE, e.kind());
    assertTrue(e.retryable());
    assertTrue(e.getMessage().contains("connection refused"), e.getMessage());
    assertTrue(e.getMessage().contains("POST /api/jobs/"), e.getMessage());
  }

  /**
   * A job's error is journaled and logged: a trinity-endpoint written with a user and password in its URL
   * showed them there (and in the endpoint's toString), found by the operator trial.
   */
  @Test
  void credentialsInTheEndpointUrlReachNoErrorNorToString() {
    TrinityEndpoint endpoint =
        TrinityEndpoint.of("http://ray-user:s3cret-pw@127.0.0.1:" + TestHttp.freePort() + "/ray?token=t0ps3cret");
    RayJobsBackend dead = new RayJobsBackend(testKit.system(), RayJobsSettings.of(endpoint));

    TrainingBackendException e = failure(dead.submit(spec(Map.of())));

    assertTrue(e.getMessage().contains("connection refused"), e.getMessage());
    for (String shown : java.util.List.of(e.getMessage(), endpoint.toString(), endpoint.shown())) {
      assertFalse(shown.contains("s3cret") || shown.contains("ray-user") || shown.contains("t0ps3cret"), shown);
      assertTrue(shown.contains("127.0.0.1:"), shown);
    }
  }

  @Test
  void silentServerFailsAfterTheRequestTimeout() throws IOException {
    // The kernel completes the TCP handshake from the backlog; nobody ever answers.
    try (ServerSocket silent = new ServerSocket(0)) {
      TrinityEndpoint endpoint =
          TrinityEndpoint.of("http://127.0.0.1:" + silent.getLocalPort()).withRequestTimeout(Duration.ofMillis(300));
      RayJobsBackend slow = new RayJobsBackend(testKit.system(), RayJobsSettings.of(endpoint));

      TrainingBackendException e = failure(slow.status("any-job"));

      assertEquals(TrainingBackendException.Kind.UNAVAILABLE, e.kind());
      assertTrue(e.getMessage().contains("timed out after 300 ms"), e.getMessage());
    }
  }

  @Test
  void bearerTokenNeverAppearsInErrors() {
    String token = "s3cr3t-token-value";
    TrinityEndpoint endpoint = TrinityEndpoint.of(simulator.baseUrl()).withBearerToken(token);
    RayJobsBackend withToken = new RayJobsBackend(testKit.system(), RayJobsSettings.of(endpoint));

    TrainingBackendException e = failure(withToken.status("missing-job"));

    assertFalse(e.getMessage().contains(token));
    assertFalse(endpoint.toString().contains(token));
  }

  private static TrainingJobSpec spec(Map<String, String> metadata) {
    String jobId = "job-" + ids.incrementAndGet() + "-" + Long.toString(System.nanoTime(), 36);
    Path dataset = workDir.resolve("exports").resolve(jobId).resolve("train.jsonl");
    try {
      Files.createDirectories(dataset.getParent());
      Files.writeString(dataset, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tools\":\"[]\"}\n");
    } catch (IOException e) {
      throw new AssertionError(e);
    }
    return new TrainingJobSpec(
        jobId,
        "support-agent",
        "sft",
        "qwen2.5-7b-instruct",
        Map.of("learning-rate", 2e-5, "batch-size", 16, "epochs", 3, "warmup-ratio", 0.1),
        dataset.toString(),
        workDir.resolve("checkpoints").toString(),
        metadata);
  }

  private static BackendJobStatus awaitTerminal(String jobId) {
    return await(() -> join(backend.status(jobId)), BackendJobStatus::isTerminal, LIMIT);
  }

  private static JsonNode stats() {
    return TestHttp.json(TestHttp.get(simulator.baseUrl() + "/simulator/stats"));
  }

  private static TrainingBackendException failure(CompletionStage<?> stage) {
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> stage.toCompletableFuture().get(20, TimeUnit.SECONDS));
    Throwable cause = e.getCause() instanceof CompletionException ce ? ce.getCause() : e.getCause();
    assertNotNull(cause);
    return assertInstanceOf(TrainingBackendException.class, cause);
  }
}
