package io.otl.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** Bench C1 at a tiny size: every rollout ends in exactly one way, and the figures are there. */
class C1CanarySmokeTest {

  @Test
  @SuppressWarnings("unchecked")
  void everyRolloutEndsOnceAndGrossSlowdownsAndErrorsAreRolledBack() {
    Args args = new Args(new String[] {"--rollouts", "20", "--power-rollouts", "6",
        "--sensitivity-rollouts", "0", "--results-dir", "target/smoke-results"}, 0);
    Result r = C1Canary.run(args);
    Map<String, Object> scenarios = (Map<String, Object>) r.figures.get("scenarios");
    // 6 candidates × 2 methods, and 3 guardrail candidates with the sequential rule only
    assertEquals(15, scenarios.size(), scenarios.keySet().toString());
    for (Map.Entry<String, Object> e : scenarios.entrySet()) {
      Map<String, Object> s = (Map<String, Object>) e.getValue();
      int n = (Integer) s.get("rollouts");
      double sum = (Double) s.get("rollbackRate") + (Double) s.get("pauseRate") + (Double) s.get("promoteRate")
          + ((Long) s.get("stalled")).doubleValue() / n;
      assertEquals(1.0, sum, 1e-3, e.getKey() + ": " + s);
    }
    Map<String, Object> slow = (Map<String, Object>) scenarios.get("latency +50% sequential");
    assertEquals(1.0, (Double) slow.get("rollbackRate"), slow.toString());
    Map<String, Object> errors = (Map<String, Object>) scenarios.get("upstream errors +10 points sequential");
    assertTrue((Double) errors.get("rollbackRate") >= 0.5, errors.toString());
    double falseRate = (Double) r.figures.get("falseRollbackRate");
    assertTrue(falseRate >= 0 && falseRate <= 1);
  }
}
