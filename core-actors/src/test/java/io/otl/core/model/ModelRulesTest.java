package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.core.model.ModelEvents.GateCheck;
import io.otl.core.model.ModelProtocol.RecordOutcome;
import io.otl.core.model.ModelState.Models;
import io.otl.core.model.ModelState.Rollout;
import io.otl.core.model.ModelState.VersionRecord;
import io.otl.core.model.ModelState.VersionState;
import io.otl.core.model.Supersession.CandidateSuperseded;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The model package's small pure rules on their own: the offline gate's bound per direction, the
 * evidence rule, input validation at its boundaries, the latency histogram's buckets and quantiles,
 * the outcome dedup set and supersession. The entity tests reach these only through a few values.
 */
class ModelRulesTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  private static ModelSettings settings(String modelUpdate) {
    return ModelSettings.fromConfig(ConfigFactory.parseString("model-update { " + modelUpdate + " }")
        .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training")));
  }

  private static VersionRecord version(String v, VersionState state, Map<String, Double> offline) {
    return new VersionRecord(v, "s3://" + v, "http://" + v, null, false, offline, state, T0, null, null,
        OutcomeAggregates.EMPTY, List.of());
  }

  private static Models withStable(Map<String, Double> stableOffline) {
    return new Models(List.of(version("v1", VersionState.STABLE, stableOffline)), "v1", Map.of());
  }

  private static GateCheck only(List<GateCheck> checks) {
    assertEquals(1, checks.size());
    return checks.get(0);
  }

  @Test
  void theOfflineGateBoundIsRelativeAndPointsTheRightWayForEachMetric() {
    // Tolerance and baselines chosen so that the bounds are exact in binary floating point.
    ModelSettings s = settings("evaluation-metrics = [task-success-rate], offline-gate-tolerance = 0.5");
    Models models = withStable(Map.of("task-success-rate", 0.5));
    // Bound 0.5 × (1 - 0.5) = 0.25: at the bound passes, below fails.
    GateCheck at = only(OfflineGate.checks(s, models, Map.of("task-success-rate", 0.25)));
    assertTrue(at.passed(), at.detail());
    assertEquals(0.5, at.baseline());
    assertEquals(0.25, at.candidate());
    assertEquals(0.5, at.tolerance());
    GateCheck below = only(OfflineGate.checks(s, models, Map.of("task-success-rate", 0.2499)));
    assertFalse(below.passed());
    assertEquals("task-success-rate: 0.2499 is below stable v1 baseline 0.5000 (limit 0.2500, "
        + "offline-gate-tolerance 0.5000)", below.detail());

    ModelSettings lat = settings("evaluation-metrics = [response-latency], offline-gate-tolerance = 0.5");
    Models latModels = withStable(Map.of("response-latency", 1000.0));
    // Lower is better: bound 1000 × (1 + 0.5) = 1500.
    assertTrue(only(OfflineGate.checks(lat, latModels, Map.of("response-latency", 1500.0))).passed());
    assertTrue(only(OfflineGate.checks(lat, latModels, Map.of("response-latency", 500.0))).passed());
    GateCheck slow = only(OfflineGate.checks(lat, latModels, Map.of("response-latency", 1500.5)));
    assertFalse(slow.passed());
    assertTrue(slow.detail().contains("1500.5000 is above stable v1 baseline 1000.0000 (limit 1500.0000"),
        slow.detail());
    assertTrue(only(OfflineGate.checks(lat, latModels, Map.of("response-latency", 900.0))).detail()
        .contains("meets"));
  }

  @Test
  void aCandidateExactlyAtTheLimitPassesDespiteFloatingPointRounding() {
    // The edge this pins: in doubles the limit would be one rounding error above (below) the value.
    assertNotEquals(0.72, 0.8 * (1 - 0.1));
    assertNotEquals(110.0, 100.0 * (1 + 0.1));
    ModelSettings s = settings("evaluation-metrics = [task-success-rate], offline-gate-tolerance = 0.1");
    Models models = withStable(Map.of("task-success-rate", 0.8));
    GateCheck at = only(OfflineGate.checks(s, models, Map.of("task-success-rate", 0.72)));
    assertTrue(at.passed(), at.detail());
    assertEquals("task-success-rate: 0.7200 meets stable v1 baseline 0.8000 (limit 0.7200, "
        + "offline-gate-tolerance 0.1000)", at.detail());
    GateCheck below = only(OfflineGate.checks(s, models, Map.of("task-success-rate", 0.71999)));
    assertFalse(below.passed(), below.detail());

    ModelSettings lat = settings("evaluation-metrics = [response-latency], offline-gate-tolerance = 0.1");
    Models latModels = withStable(Map.of("response-latency", 100.0));
    GateCheck atLatency = only(OfflineGate.checks(lat, latModels, Map.of("response-latency", 110.0)));
    assertTrue(atLatency.passed(), atLatency.detail());
    assertFalse(only(OfflineGate.checks(lat, latModels, Map.of("response-latency", 110.001))).passed());
  }

  @Test
  void theOfflineGatePrefersTheSameRunBenchScoreOfTheStable() {
    ModelSettings s = settings("evaluation-metrics = [task-success-rate], offline-gate-tolerance = 0.0");
    Models models = withStable(Map.of("task-success-rate", 0.9));
    Map<String, Double> candidate = Map.of("task-success-rate", 0.75, "bench-stable.task-success-rate", 0.7);
    GateCheck c = only(OfflineGate.checks(s, models, candidate));
    assertTrue(c.passed(), c.detail());
    assertEquals(0.7, c.baseline());
    assertTrue(c.detail().contains("same-run bench score"), c.detail());
    assertEquals(0.9, EvalEvidence.baseline(Map.of(), Map.of("task-success-rate", 0.9), Metric.TASK_SUCCESS_RATE));
    assertNull(EvalEvidence.baseline(Map.of(), Map.of(), Metric.TASK_SUCCESS_RATE));
  }

  @Test
  void theOfflineGatePassesWithoutStableOrBaselineAndFailsAMissingMetric() {
    ModelSettings s = settings("evaluation-metrics = [task-success-rate, user-satisfaction]");
    List<GateCheck> first = OfflineGate.checks(s, Models.EMPTY, Map.of());
    assertEquals(2, first.size());
    assertTrue(first.stream().allMatch(GateCheck::passed));
    assertEquals("task-success-rate: no stable version yet", first.get(0).detail());

    Models models = withStable(Map.of("task-success-rate", 0.8));
    List<GateCheck> checks = OfflineGate.checks(s, models, Map.of());
    assertFalse(checks.get(0).passed());
    assertNull(checks.get(0).candidate());
    assertEquals("task-success-rate: missing from the offline metrics (stable v1 has 0.8000)",
        checks.get(0).detail());
    assertTrue(checks.get(1).passed());
    assertEquals("user-satisfaction: stable v1 has no offline baseline", checks.get(1).detail());
  }

  @Test
  void aJobsCandidateNeedsEvidenceAndAnEmptyEvalSetIsNone() {
    List<Metric> configured = List.of(Metric.TASK_SUCCESS_RATE, Metric.USER_SATISFACTION);
    Models models = withStable(Map.of());
    // Manual registrations and proxy candidates need none.
    assertEquals(Optional.empty(), EvalEvidence.missing("v2", null, Map.of(), configured, models));
    assertEquals(Optional.empty(), EvalEvidence.missing("proxy-3", "job-1-a", Map.of(), configured, models));
    assertEquals(Optional.empty(),
        EvalEvidence.missing("v2", "job-1-a", Map.of("user-satisfaction", 0.5), configured, models));
    assertEquals(Optional.empty(), EvalEvidence.missing("v2", "job-1-a",
        Map.of("task-success-rate", 0.5, EvalEvidence.EVAL_COUNT, 12.0), configured, models));

    String none = EvalEvidence.missing("v2", "job-1-a", Map.of("loss", 0.1), configured, models).orElseThrow();
    assertEquals("no offline evidence against stable v1: job job-1-a reported none of [task-success-rate, "
        + "user-satisfaction] (no evaluation of the held-out set); no automatic canary, a manual promote "
        + "is needed", none);
    String empty = EvalEvidence.missing("v2", "job-1-a",
        Map.of("task-success-rate", 0.5, EvalEvidence.EVAL_COUNT, 0.0), configured, Models.EMPTY).orElseThrow();
    assertTrue(empty.startsWith("no offline evidence: the held-out eval set of job job-1-a is empty"), empty);
  }

  @Test
  void offlineMetricsAreFiniteAndRatesAreInTheUnitInterval() {
    assertEquals(Optional.empty(), ModelValidation.offlineMetrics(null));
    assertEquals(Optional.empty(), ModelValidation.offlineMetrics(Map.of("task-success-rate", 0.0,
        "user-satisfaction", 1.0, "response-latency", 0.0, "loss", -5.0)));
    Map<String, Double> nullValue = new LinkedHashMap<>();
    nullValue.put("loss", null);
    for (Map<String, Double> bad : List.of(Map.of("loss", Double.NaN), Map.of("loss", Double.NEGATIVE_INFINITY),
        nullValue, Map.of("task-success-rate", -0.01), Map.of("task-success-rate", 1.01),
        Map.of("user-satisfaction", 1.5), Map.of("user-satisfaction", -0.5), Map.of("response-latency", -1.0))) {
      assertTrue(ModelValidation.offlineMetrics(bad).isPresent(), bad.toString());
    }
    assertEquals("offlineMetrics.response-latency: must be >= 0 ms, was -1.0",
        ModelValidation.offlineMetrics(Map.of("response-latency", -1.0)).orElseThrow());
  }

  @Test
  void registrationNeedsAVersionAndBoundedArtifactAndEndpoint() {
    String max = "x".repeat(2048);
    assertEquals(Optional.empty(), ModelValidation.registration("v2", max, max));
    assertTrue(ModelValidation.registration("", "a", "e").isPresent());
    assertEquals("artifact: must be a non-blank URI of at most 2048 characters, was null",
        ModelValidation.registration("v2", null, "e").orElseThrow());
    assertTrue(ModelValidation.registration("v2", " ", "e").isPresent());
    assertTrue(ModelValidation.registration("v2", max + "x", "e").isPresent());
    assertEquals("endpoint: must be non-blank, at most 2048 characters, was ' '",
        ModelValidation.registration("v2", "a", " ").orElseThrow());
    assertTrue(ModelValidation.registration("v2", "a", null).isPresent());
    assertTrue(ModelValidation.registration("v2", "a", max + "x").isPresent());
  }

  private static RecordOutcome outcome(String session, String version, Double rating, int up, int down,
      Double p95, Integer calls, Integer errors, Long tokens) {
    return new RecordOutcome(session, version, true, rating, up, down, p95, null, calls, errors, tokens);
  }

  @Test
  void outcomesAreCheckedAtEveryBoundary() {
    assertEquals(Optional.empty(), ModelValidation.outcome(outcome("s", "v1", 1.0, 0, 0, 0.0, 0, 0, 0L)));
    assertEquals(Optional.empty(), ModelValidation.outcome(outcome("s", "v1", 5.0, 0, 0, null, 3, 3, null)));
    assertEquals(Optional.empty(), ModelValidation.outcome(outcome("s", "v1", null, 0, 0, null, null, null, null)));
    assertEquals("sessionId: must not be blank",
        ModelValidation.outcome(outcome(" ", "v1", null, 0, 0, null, null, null, null)).orElseThrow());
    assertTrue(ModelValidation.outcome(outcome(null, "v1", null, 0, 0, null, null, null, null)).isPresent());
    assertEquals("modelVersion: must not be blank",
        ModelValidation.outcome(outcome("s", "", null, 0, 0, null, null, null, null)).orElseThrow());
    assertTrue(ModelValidation.outcome(outcome("s", null, null, 0, 0, null, null, null, null)).isPresent());
    for (double r : new double[] {0.99, 5.01, Double.NaN}) {
      assertTrue(ModelValidation.outcome(outcome("s", "v1", r, 0, 0, null, null, null, null)).isPresent());
    }
    assertEquals("thumbsUp/thumbsDown: must be >= 0, were 0/-1",
        ModelValidation.outcome(outcome("s", "v1", null, 0, -1, null, null, null, null)).orElseThrow());
    assertTrue(ModelValidation.outcome(outcome("s", "v1", null, -1, 0, null, null, null, null)).isPresent());
    for (double p : new double[] {-0.1, Double.POSITIVE_INFINITY, Double.NaN}) {
      assertTrue(ModelValidation.outcome(outcome("s", "v1", null, 0, 0, p, null, null, null)).isPresent());
    }
    assertEquals("modelCalls: must be >= 0 or absent, was -1",
        ModelValidation.outcome(outcome("s", "v1", null, 0, 0, null, -1, null, null)).orElseThrow());
    assertEquals("upstreamErrors: must be between 0 and modelCalls (2), was 3",
        ModelValidation.outcome(outcome("s", "v1", null, 0, 0, null, 2, 3, null)).orElseThrow());
    assertTrue(ModelValidation.outcome(outcome("s", "v1", null, 0, 0, null, 2, -1, null)).isPresent());
    assertTrue(ModelValidation.outcome(outcome("s", "v1", null, 0, 0, null, null, 0, null)).isPresent());
    assertEquals("tokens: must be >= 0 or absent, was -1",
        ModelValidation.outcome(outcome("s", "v1", null, 0, 0, null, null, null, -1L)).orElseThrow());
  }

  @Test
  void latencyBucketsAreTwoPercentWideAndQuantilesAreBucketUpperBounds() {
    assertEquals(0, LatencyHistogram.bucketOf(0.5));
    assertEquals(0, LatencyHistogram.bucketOf(Double.NaN));
    assertEquals(1, LatencyHistogram.bucketOf(1.0));
    assertEquals(2, LatencyHistogram.bucketOf(1.02));
    assertEquals(LatencyHistogram.MAX_BUCKET, LatencyHistogram.bucketOf(1e12));
    assertEquals(0.0, LatencyHistogram.lowerBound(0));
    assertEquals(1.0, LatencyHistogram.lowerBound(1));
    assertEquals(1.02, LatencyHistogram.upperBound(1), 1e-12);
    assertEquals(Double.MAX_VALUE, LatencyHistogram.upperBound(LatencyHistogram.MAX_BUCKET));
    for (double ms : new double[] {1, 7.3, 100, 999.9, 123_456}) {
      int b = LatencyHistogram.bucketOf(ms);
      assertTrue(LatencyHistogram.lowerBound(b) <= ms && ms < LatencyHistogram.upperBound(b), "" + ms);
    }

    assertTrue(Double.isNaN(LatencyHistogram.EMPTY.quantile(0.5)));
    LatencyHistogram h = LatencyHistogram.EMPTY;
    for (int i = 1; i <= 100; i++) {
      h = h.add(i * 10.0);
    }
    assertEquals(100, h.total());
    // The 95th of 100 values is 950 ms: reported as its bucket's upper bound (at most 2 % high).
    double p95 = h.quantile(0.95);
    assertEquals(LatencyHistogram.upperBound(LatencyHistogram.bucketOf(950)), p95);
    assertTrue(p95 > 950 && p95 <= 950 * 1.02, "" + p95);
    assertEquals(LatencyHistogram.upperBound(LatencyHistogram.bucketOf(10)), h.quantile(0.0));
    assertEquals(LatencyHistogram.upperBound(LatencyHistogram.bucketOf(1000)), h.quantile(1.0));
    // Whole buckets at or above the threshold: 500..1000 ms are 51 values, the bucket of 500 starts below it.
    long above = h.countAtOrAbove(500);
    assertTrue(above == 50 || above == 51, "" + above);
    assertEquals(h.countAtOrAbove(LatencyHistogram.lowerBound(LatencyHistogram.bucketOf(500))), 51);
    assertEquals(100, h.countAtOrAbove(0));
    assertEquals(0, h.countAtOrAbove(2000));

    LatencyHistogram huge = LatencyHistogram.EMPTY.add(1e9);
    assertEquals(LatencyHistogram.lowerBound(LatencyHistogram.MAX_BUCKET), huge.quantile(0.5));
    assertEquals(Map.of(LatencyHistogram.MAX_BUCKET, 1L), huge.counts());
    assertEquals(new TreeMap<>(Map.of(0, 2L)), LatencyHistogram.EMPTY.add(0.1).add(0.2).counts());
  }

  @Test
  void theOutcomeDedupSetKeepsEachSessionOnceInHashOrder() {
    SessionSet s = SessionSet.EMPTY;
    for (String id : List.of("c", "a", "b", "a", "d", "c")) {
      s = s.add(id);
    }
    assertEquals(4, s.size());
    for (String id : List.of("a", "b", "c", "d")) {
      assertTrue(s.contains(id), id);
    }
    assertFalse(s.contains("e"));
    SessionSet again = s.add("b");
    assertSame(s, again);
    long[] hashes = s.hashes();
    for (int i = 1; i < hashes.length; i++) {
      assertTrue(hashes[i - 1] < hashes[i]);
    }
    assertEquals(s, SessionSet.of(new long[] {hashes[3], hashes[1], hashes[0], hashes[2]}));
    assertEquals(s.hashCode(), SessionSet.of(hashes).hashCode());
    assertNotEquals(s, SessionSet.EMPTY.add("a"));
    assertEquals(SessionSet.EMPTY, SessionSet.of(null));
    assertEquals("SessionSet(4 ids)", s.toString());
    hashes[0] = 42;
    assertNotEquals(42, s.hashes()[0], "the set is immutable");
  }

  /**
   * Trial t26: a ModelVersion snapshot written mid-rollout by a build before the scored marks (no
   * {@code scoredMarks} in its rollout) holds only "dedup:" hashes. Restored by this build, late
   * feedback on a session it had counted with a score was counted a second time (120 sessions, 130
   * satisfaction samples after 10 late ratings).
   */
  @Test
  void aRolloutFromASnapshotWithoutScoredMarksTakesItsEarlierSessionsAsScored() {
    SessionSet legacy = SessionSet.of(new long[] {
        RoutingTable.hash64("dedup:", "old-1"), RoutingTable.hash64("dedup:", "old-2")});
    Rollout restored = new Rollout("v2", "v1", List.of(0.05, 1.0), 0, Instant.parse("2026-12-04T00:00:00Z"), false,
        OutcomeAggregates.EMPTY, OutcomeAggregates.EMPTY, legacy, SessionSet.EMPTY, null);
    assertFalse(restored.marksKept());
    assertTrue(legacy.containsScored("old-1", restored.marksKept()), "counted before the upgrade: its score may be in");
    assertFalse(legacy.containsScored("never-counted", false));
    // Counted by this build without a score: a late rating counts once, then never again.
    Rollout after = restored.withOutcome(new ModelEvents.OutcomeRecorded("new-1", "v2", true, null, 0, 0, null,
        Instant.parse("2026-12-04T00:01:00Z"), null, null, null));
    SessionSet cand = after.candidateSessions();
    assertTrue(cand.contains("new-1"));
    assertFalse(cand.containsScored("new-1", after.marksKept()));
    assertTrue(cand.containsScored("old-2", after.marksKept()));
    Rollout rated = after.withRevision(new ModelEvents.OutcomeRevised("new-1", "v2", 5.0, 0, 0,
        Instant.parse("2026-12-04T00:02:00Z")));
    assertTrue(rated.candidateSessions().containsScored("new-1", rated.marksKept()));
    // A rollout this build starts keeps the marks: an unscored session's late rating counts.
    Rollout fresh = Rollout.start("v2", "v1", List.of(0.05, 1.0), Instant.parse("2026-12-04T00:00:00Z"));
    assertTrue(fresh.marksKept());
    SessionSet counted = fresh.candidateSessions().add("s");
    assertFalse(counted.containsScored("s", fresh.marksKept()));
  }

  @Test
  void aNewReadyCandidateRetiresEveryOlderReadyOneOnly() {
    Models models = new Models(List.of(version("v1", VersionState.STABLE, Map.of()),
        version("v2", VersionState.READY, Map.of()), version("v3", VersionState.REJECTED, Map.of()),
        version("v4", VersionState.READY, Map.of()), version("v5", VersionState.READY, Map.of())), "v1", Map.of());
    List<CandidateSuperseded> retired = Supersession.olderReady(models, "v5", T0);
    assertEquals(List.of(new CandidateSuperseded("v2", "v5", T0), new CandidateSuperseded("v4", "v5", T0)), retired);
    assertEquals("superseded by v5 (one rollout at a time: only the newest READY candidate waits)",
        Supersession.reason(retired.get(0)));
  }

  @Test
  void metricsAreFoundByKeyOrNameAndGuardrailsAreNoEvaluationMetrics() {
    assertEquals(Metric.RESPONSE_LATENCY, Metric.fromKey("response-latency"));
    assertEquals(Metric.RESPONSE_LATENCY, Metric.fromKey("RESPONSE_LATENCY"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Metric.fromKey("latency"));
    assertTrue(e.getMessage().contains("known: task-success-rate, user-satisfaction"), e.getMessage());
    assertEquals("task-success-rate, user-satisfaction, response-latency", Metric.allowedKeys());
    assertTrue(Metric.TOKENS_PER_SESSION.guardrail());
    assertFalse(Metric.TASK_SUCCESS_RATE.guardrail());
    assertTrue(Metric.TOKENS_PER_SESSION.relativeTolerance());
    assertFalse(Metric.UPSTREAM_ERROR_RATE.higherIsBetter());
  }
}
