package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.model.CanaryStatistics.TestResult;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelProtocol.Command;
import io.otl.core.model.ModelProtocol.ErrorCode;
import io.otl.core.model.ModelProtocol.Failure;
import io.otl.core.model.ModelProtocol.OutcomeReply;
import io.otl.core.model.ModelProtocol.TransitionReply;
import io.otl.core.model.ModelProtocol.VersionStatus;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionState;
import io.otl.core.model.ModelViews.VersionView;
import io.otl.core.testing.EntityTestKits;
import io.otl.core.testing.ManualClock;
import java.time.Instant;
import java.util.Map;
import java.util.UUID;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The guardrails through the real entity (issue #19): the inference gateway's figures of each
 * session (model calls, upstream errors, tokens) reach the rollout with the outcome, a candidate
 * worse on one of them is rolled back with the test's figures in {@code VersionRolledBack}, and a
 * restart replays the same state from serialized events and snapshots.
 */
class GuardrailRolloutTest {

  private static final Map<String, Double> OFFLINE =
      Map.of("task-success-rate", 0.85, "user-satisfaction", 0.80, "response-latency", 900.0);

  private static ActorTestKit testKit;

  private final ManualClock clock = new ManualClock(Instant.parse("2025-01-01T00:00:00Z"));
  private EventSourcedBehaviorTestKit<Command, Event, State> kit;

  @BeforeAll
  static void start() {
    testKit = EntityTestKits.start("GuardrailRolloutTest");
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  private void startCanary() {
    ModelSettings settings = ModelSettings.fromConfig(EntityTestKits.training("min-samples-per-step = 20"));
    kit = EventSourcedBehaviorTestKit.create(testKit.system(),
        ModelVersion.create("agent-" + UUID.randomUUID(), settings, clock),
        EventSourcedBehaviorTestKit.enabledSerializationSettings());
    for (String v : new String[] {"v1", "v2"}) {
      kit.<TransitionReply>runCommand(r -> new ModelVersion.RegisterCandidate(
          v, "s3://ckpt/" + v, "http://" + v + ":8000", "job-" + v, OFFLINE, r));
    }
    assertEquals(VersionState.CANARY, version("v2").state());
  }

  private VersionView version(String v) {
    return kit.<ModelVersion.ModelsView>runCommand(ModelVersion.Get::new).reply().versions().stream()
        .filter(x -> x.version().equals(v)).findFirst().orElseThrow();
  }

  private CommandResultWithReply<Command, Event, State, OutcomeReply> outcome(
      String session, String version, int i, Integer calls, Integer errors, Long tokens) {
    // Success, satisfaction and latency are identical for both versions: only the guardrail differs.
    return kit.runCommand(r -> new ModelVersion.RecordOutcome(session, version, i % 5 != 0, 1.0 + i % 5,
        i % 2, 1 - i % 2, 800.0 + (i * 37) % 400, r, calls, errors, tokens));
  }

  /**
   * 19 stable sessions per candidate session (the 5 % split, so the sample-ratio guardrail stays
   * quiet); each session makes 4 gateway calls. Returns the automatic rollback, if any.
   */
  private ModelVersion.VersionRolledBack feed(int candidateErrorsEvery, double candidateTokenFactor, int n) {
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < 19; j++) {
        int x = i * 19 + j;
        outcome("s-" + x, "v1", x, 4, x % 50 == 0 ? 1 : 0, 1000L + (x * 53) % 400);
      }
      int errors = candidateErrorsEvery > 0 && i % candidateErrorsEvery == 0 ? 2 : (i % 50 == 0 ? 1 : 0);
      long tokens = Math.round((1000 + (i * 53) % 400) * candidateTokenFactor);
      for (Event e : outcome("c-" + i, "v2", i, 4, errors, tokens).events()) {
        if (e instanceof ModelVersion.VersionRolledBack rb) {
          return rb;
        }
      }
    }
    return null;
  }

  private static TestResult degradedOnly(ModelVersion.VersionRolledBack rb, Metric metric) {
    TestResult t = rb.tests().stream().filter(x -> x.metric() == metric).findFirst().orElseThrow();
    assertTrue(t.degraded(), t.summary());
    assertTrue(rb.tests().stream().filter(x -> x.metric() != metric).noneMatch(TestResult::degraded),
        rb.reason());
    assertEquals(SequentialTest.METHOD, t.method());
    assertTrue(t.statistic() > t.criticalValue(), t.summary());
    assertTrue(t.pValue() <= t.alpha(), t.summary());
    assertTrue(t.looks() >= 20 * 20, "looks so far: " + t.looks());
    assertTrue(t.summary().startsWith("guardrail " + metric.key()), t.summary());
    return t;
  }

  @Test
  void aCandidateWithMoreUpstreamErrorsIsRolledBackAndTheRestartReplaysIt() {
    startCanary();
    // Half of the candidate's calls fail; the stable loses one call in 200.
    ModelVersion.VersionRolledBack rb = feed(1, 1.0, 200);
    assertNotNull(rb, "no rollback after 200 candidate sessions");
    TestResult t = degradedOnly(rb, Metric.UPSTREAM_ERROR_RATE);
    assertEquals(0.5, t.candidateValue(), 0.02);
    assertEquals(0.02, t.tolerance());
    assertTrue(rb.reason().contains("upstream-error-rate"), rb.reason());

    VersionView before = version("v2");
    assertEquals(VersionState.ROLLED_BACK, before.state());
    State restarted = kit.restart().state();
    assertInstanceOf(ModelVersion.Idle.class, restarted);
    VersionView after = version("v2");
    assertEquals(VersionState.ROLLED_BACK, after.state());
    assertEquals(before.history(), after.history());
    assertEquals(VersionState.STABLE, version("v1").state());
  }

  @Test
  void aCandidateThatSpendsTwiceTheTokensIsRolledBack() {
    startCanary();
    ModelVersion.VersionRolledBack rb = feed(0, 2.0, 200);
    assertNotNull(rb, "no rollback after 200 candidate sessions");
    TestResult t = degradedOnly(rb, Metric.TOKENS_PER_SESSION);
    assertEquals(2.0, t.candidateValue() / t.stableValue(), 0.05);
    assertTrue(t.relativeTolerance());
    assertEquals(VersionState.ROLLED_BACK, version("v2").state());
  }

  @Test
  void guardrailFiguresThatContradictThemselvesAreRefusedAndChangeNothing() {
    startCanary();
    var r = outcome("bad-1", "v2", 1, 2, 3, 100L);
    Failure f = assertInstanceOf(Failure.class, r.reply());
    assertEquals(ErrorCode.INVALID_INPUT, f.code());
    assertTrue(f.message().startsWith("upstreamErrors"), f.message());
    assertTrue(r.events().isEmpty());
    f = assertInstanceOf(Failure.class, outcome("bad-2", "v2", 1, 2, 0, -5L).reply());
    assertTrue(f.message().startsWith("tokens"), f.message());
    // The same session with sound figures is then recorded once.
    assertInstanceOf(ModelVersion.OutcomeAck.class, outcome("bad-1", "v2", 1, 2, 1, 100L).reply());
    assertEquals(VersionState.CANARY, version("v2").state());
  }
}
