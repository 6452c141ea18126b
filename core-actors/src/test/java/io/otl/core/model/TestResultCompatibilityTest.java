package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.typesafe.config.ConfigFactory;
import io.otl.core.model.CanaryStatistics.TestResult;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializer;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * TestResult is persisted inside VersionRolledBack, StepAdvanced, RolloutPaused and
 * VersionPromoted: a rollback written before the sequential test (no method, pValue, …) must still
 * read, through the journal's own serializer, and a new one must round-trip.
 */
class TestResultCompatibilityTest {

  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = ActorTestKit.create("TestResultCompatibilityTest", ConfigFactory.parseString(
            "pekko.actor.serialization-bindings {\"io.otl.core.JsonSerializable\" = jackson-json}")
        .withFallback(ConfigFactory.load()));
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void aRollbackWrittenBeforeTheSequentialTestStillReads() {
    Serialization serialization = SerializationExtension.get(Adapter.toClassic(testKit.system()));
    ModelVersion.VersionRolledBack current = new ModelVersion.VersionRolledBack("v2", true, "degraded",
        List.of(CanaryStatistics.successRate(82, 100, 62, 100, 0.02, 0.95)), null,
        Instant.parse("2026-01-01T00:00:00Z"));
    Serializer serializer = serialization.findSerializerFor(current);
    String manifest = Serializers.manifestFor(serializer, current);
    String old = """
        {"version":"v2","automatic":true,"reason":"degraded at CANARY","tests":[{"metric":"task-success-rate",
        "stableValue":0.82,"candidateValue":0.62,"stableSamples":100,"candidateSamples":100,"statistic":2.9,
        "criticalValue":1.645,"confidence":0.95,"tolerance":0.02,"relativeTolerance":false,"threshold":0.8,
        "observedTailShare":null,"degraded":true,"summary":"task-success-rate 0.62 (n=100) vs stable 0.82"}],
        "restoredStable":null,"at":"2026-01-01T00:00:00Z"}""";
    ModelVersion.VersionRolledBack read = (ModelVersion.VersionRolledBack) serialization.deserialize(
        old.getBytes(StandardCharsets.UTF_8), serializer.identifier(), manifest).get();
    TestResult t = read.tests().get(0);
    assertEquals(Metric.TASK_SUCCESS_RATE, t.metric());
    assertEquals(1.645, t.criticalValue());
    assertEquals(true, t.degraded());
    assertNull(t.method());
    assertNull(t.pValue());
    assertNull(t.looks());

    OutcomeAggregates stable = OutcomeAggregates.EMPTY;
    OutcomeAggregates candidate = OutcomeAggregates.EMPTY;
    for (int i = 0; i < 200; i++) {
      stable = stable.add(i % 5 != 0, 4.0, 0, 0, 900.0 + i);
      candidate = candidate.add(i % 2 == 0, 4.0, 0, 0, 900.0 + i);
    }
    TestResult sequential = SequentialTest.run(List.of(Metric.TASK_SUCCESS_RATE), 3, stable, candidate,
        ModelSettings.defaults().tolerance(), 0.95, 4, 100, 400).get(0);
    ModelVersion.VersionRolledBack fresh = new ModelVersion.VersionRolledBack("v3", true, "degraded",
        List.of(sequential), null, Instant.parse("2026-01-02T00:00:00Z"));
    byte[] bytes = serialization.serialize(fresh).get();
    assertEquals(fresh, serialization.deserialize(bytes, serializer.identifier(),
        Serializers.manifestFor(serializer, fresh)).get());
    assertEquals(SequentialTest.METHOD, sequential.method());
    assertEquals(400L, sequential.looks());
  }

  @Test
  void anOutcomeWrittenBeforeTheGuardrailsReadsWithoutFiguresAndOneWithoutFiguresIsWrittenAsBefore() {
    Serialization serialization = SerializationExtension.get(Adapter.toClassic(testKit.system()));
    String old = "{\"sessionId\":\"s1\",\"modelVersion\":\"v2\",\"success\":true,\"rating\":4.0,"
        + "\"thumbsUp\":1,\"thumbsDown\":0,\"latencyP95Ms\":900.0,\"at\":\"2026-01-01T00:00:00Z\"}";
    ModelVersion.OutcomeRecorded current = new ModelVersion.OutcomeRecorded("s1", "v2", true, 4.0, 1, 0,
        900.0, Instant.parse("2026-01-01T00:00:00Z"));
    Serializer serializer = serialization.findSerializerFor(current);
    String manifest = Serializers.manifestFor(serializer, current);
    ModelVersion.OutcomeRecorded read = (ModelVersion.OutcomeRecorded) serialization.deserialize(
        old.getBytes(StandardCharsets.UTF_8), serializer.identifier(), manifest).get();
    assertEquals(current, read);
    assertNull(read.modelCalls());
    assertEquals(old, new String(serialization.serialize(current).get(), StandardCharsets.UTF_8));

    ModelVersion.OutcomeRecorded withFigures = new ModelVersion.OutcomeRecorded("s2", "v2", true, null, 0, 0,
        null, Instant.parse("2026-01-01T00:00:00Z"), 4, 1, 2500L);
    assertEquals(withFigures, serialization.deserialize(serialization.serialize(withFigures).get(),
        serializer.identifier(), manifest).get());
    // An aggregate (part of the snapshots) without guardrail figures is written as before too.
    com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
    String plain = json.valueToTree(OutcomeAggregates.EMPTY.add(true, 4.0, 0, 0, 900.0)).toString();
    assertEquals(false, plain.contains("callSessions") || plain.contains("token"), plain);
    String figures = json.valueToTree(OutcomeAggregates.EMPTY.add(true, 4.0, 0, 0, 900.0, 4, 1, 2500L)).toString();
    assertEquals(true, figures.contains("\"callSessions\":1") && figures.contains("\"tokenSessions\":1"), figures);
  }
}
