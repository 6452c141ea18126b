package io.otl.persistence.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.model.CanaryStatistics.TestResult;
import io.otl.core.model.Metric;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The audit's one-line "why rolled back" for a guardrail: statistic, threshold, level, looks. */
class TimelineFiguresTest {

  @Test
  void aDegradedGuardrailIsNamedWithItsStatisticLevelAndLooks() {
    TestResult tokens = new TestResult(Metric.TOKENS_PER_SESSION, 1500, 2310, 380, 41, 4.2, 3.71, 0.95, 0.2,
        true, 1800, null, true, "guardrail tokens-per-session …", "msprt", 0.43, 0.06, 0.05, 0.0011, 0.0033,
        421L);
    TestResult errors = new TestResult(Metric.UPSTREAM_ERROR_RATE, 0.01, 0.012, 380, 41, -1.0, 3.9, 0.95, 0.02,
        false, 0.03, null, false, "ok", "msprt", -0.002, 0.01, 0.05, 1.0, 0.01, 421L);
    assertEquals("; tokens per session (guardrail) 2310 tokens vs stable 1500 tokens (n=41 / 380, z=4.2 > 3.71,"
        + " always-valid p=0.0011 vs α=0.0033 at look 421)", Timeline.figures(List.of(tokens, errors), true));
  }

  @Test
  void theSummaryKeepsAUrlInTheStateAndCutsOnlyBeforeTheReason() {
    String v0 = "STABLE (base model qwen2.5-7b-instruct at http://127.0.0.1:8265/v1, from configuration)";
    assertEquals(v0.length(), Timeline.reasonStart(v0), "the audit printed 'STABLE (base model … at http'");
    String rolledBack = "ROLLED_BACK (manual): operator asked";
    assertEquals("ROLLED_BACK (manual)", rolledBack.substring(0, Timeline.reasonStart(rolledBack)));
  }

  @Test
  void aTestWithoutVarianceSaysSoInsteadOfTheFloorsZ() {
    // Every session 20 tokens in both versions (the simulator's answers): se at the floor, z its artefact.
    TestResult tokens = new TestResult(Metric.TOKENS_PER_SESSION, 20, 20, 15, 8, -182321.6, 5.76, 0.95, 0.2,
        true, 24, null, false, "no variance …", "msprt", 0.0, 1e-6, 0.05, 1.0, 0.025, 23L);
    assertEquals("; tokens per session (guardrail) 20 tokens vs stable 20 tokens (n=8 / 15, no variance, within"
        + " the tolerance, always-valid p=1.0 vs α=0.025 at look 23)", Timeline.figures(List.of(tokens), false),
        "trial t121: the audit timeline printed z=-182321.6 ≤ 5.76");
  }

  @Test
  void theSummaryDoesNotCutAReasonInsideParentheses() {
    String undeploy = "undeploying p3-v1-369b3c2b (load failed: unloading whatever of it may have landed)";
    assertEquals(undeploy.length(), Timeline.reasonStart(undeploy),
        "trial t121: the summary read 'undeploying p3-v1-369b3c2b (load failed at …', a parenthesis left open");
    String failed = "DEPLOY_FAILED after 1 attempt(s): vLLM refused to load m (HTTP 404): No adapter";
    assertEquals("DEPLOY_FAILED after 1 attempt(s)", failed.substring(0, Timeline.reasonStart(failed)));
  }
}
