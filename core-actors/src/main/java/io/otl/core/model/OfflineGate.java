package io.otl.core.model;

import io.otl.core.model.ModelEvents.GateCheck;
import io.otl.core.model.ModelState.Models;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The offline gate of a job's candidate (design §3.3), a pure function: each evaluation metric of
 * the candidate against the stable's offline baseline (or the same run's bench score of the base),
 * within {@code offline-gate-tolerance}. Without a stable, or without a baseline, a metric passes.
 */
final class OfflineGate {

  private OfflineGate() {}

  static List<GateCheck> checks(ModelSettings settings, Models models, Map<String, Double> candidate) {
    String stable = models.stable();
    Map<String, Double> baseline =
        stable == null ? Map.of() : models.require(stable).offlineMetrics();
    double tol = settings.offlineGateTolerance();
    List<GateCheck> checks = new ArrayList<>();
    for (Metric m : settings.evaluationMetrics()) {
      Double c = candidate.get(m.key());
      Double b = EvalEvidence.baseline(candidate, baseline, m);
      String what = candidate.containsKey(EvalEvidence.BASELINE_PREFIX + m.key()) ? "same-run bench score" : "baseline";
      if (stable == null) {
        checks.add(new GateCheck(m, c, null, tol, true, m.key() + ": no stable version yet"));
      } else if (b == null) {
        checks.add(new GateCheck(m, c, null, tol, true,
            m.key() + ": stable " + stable + " has no offline baseline"));
      } else if (c == null) {
        checks.add(new GateCheck(m, null, b, tol, false, String.format(Locale.ROOT,
            "%s: missing from the offline metrics (stable %s has %.4f)", m.key(), stable, b)));
      } else {
        BigDecimal exactBound = bound(b, tol, m.higherIsBetter());
        double bound = exactBound.doubleValue();
        int vsBound = BigDecimal.valueOf(c).compareTo(exactBound);
        boolean ok = m.higherIsBetter() ? vsBound >= 0 : vsBound <= 0;
        checks.add(new GateCheck(m, c, b, tol, ok, String.format(Locale.ROOT,
            "%s: %.4f %s stable %s %s %.4f (limit %.4f, offline-gate-tolerance %.4f)",
            m.key(), c, ok ? "meets" : (m.higherIsBetter() ? "is below" : "is above"), stable, what, b,
            bound, tol)));
      }
    }
    return checks;
  }

  /**
   * The limit {@code baseline × (1 ∓ tolerance)} in decimal arithmetic on the values as written
   * (their shortest decimal form), so that a candidate equal to the limit passes: in binary floating
   * point 0.8 × (1 - 0.1) is 0.7200000000000001 and 0.72 would fail by one rounding error. Metrics
   * and tolerance are validated finite before they get here.
   */
  private static BigDecimal bound(double baseline, double tolerance, boolean higherIsBetter) {
    BigDecimal slack = BigDecimal.valueOf(tolerance);
    BigDecimal factor = higherIsBetter ? BigDecimal.ONE.subtract(slack) : BigDecimal.ONE.add(slack);
    return BigDecimal.valueOf(baseline).multiply(factor);
  }
}
