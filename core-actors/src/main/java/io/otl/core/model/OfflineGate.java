package io.otl.core.model;

import io.otl.core.model.ModelEvents.GateCheck;
import io.otl.core.model.ModelState.Models;
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
        double bound = m.higherIsBetter() ? b * (1 - tol) : b * (1 + tol);
        boolean ok = m.higherIsBetter() ? c >= bound : c <= bound;
        checks.add(new GateCheck(m, c, b, tol, ok, String.format(Locale.ROOT,
            "%s: %.4f %s stable %s %s %.4f (limit %.4f, offline-gate-tolerance %.4f)",
            m.key(), c, ok ? "meets" : (m.higherIsBetter() ? "is below" : "is above"), stable, what, b,
            bound, tol)));
      }
    }
    return checks;
  }
}
