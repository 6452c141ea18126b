package io.otl.core.model;

import io.otl.core.model.CanaryRules.Action;
import io.otl.core.model.CanaryRules.Decision;
import io.otl.core.model.CanaryRules.Method;
import io.otl.core.model.CanaryStatistics.TestResult;
import java.time.Instant;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One seeded rollout of the default plan through the real step rule: sessions arrive at 200 an
 * hour, each routed to the candidate at the step's share, and the rule looks after every session,
 * for at most 30 days. The tests that share it differ only in what one session's outcome is.
 */
final class SimulatedRollout {
  private static final ModelSettings DEFAULTS = ModelSettings.defaults();

  /** One session's outcome added to its side's aggregates; draws from {@code rnd} in a fixed order. */
  interface Sessions {
    OutcomeAggregates add(OutcomeAggregates side, boolean toCandidate, SplittableRandom rnd);
  }

  /** The end of one rollout: its last action (WAIT when 30 days ran out) and the metrics found degraded. */
  record End(Action action, List<Metric> degraded) {}

  private SimulatedRollout() {}

  static End run(Method method, SplittableRandom rnd, Sessions sessions) {
    List<Double> plan = DEFAULTS.steps();
    int step = 0;
    long t = 0;
    long stepStart = 0;
    OutcomeAggregates stable = OutcomeAggregates.EMPTY;
    OutcomeAggregates candidate = OutcomeAggregates.EMPTY;
    while (t < 30L * 86_400_000) {
      t += (long) Math.ceil(-18_000 * Math.log(1 - rnd.nextDouble()));
      boolean toCandidate = rnd.nextDouble() < plan.get(step);
      if (toCandidate) {
        candidate = sessions.add(candidate, true, rnd);
      } else {
        stable = sessions.add(stable, false, rnd);
      }
      Decision d = CanaryRules.decide(DEFAULTS, method, plan, step, Instant.ofEpochMilli(stepStart),
          false, stable, candidate, false, Instant.ofEpochMilli(t));
      switch (d.action()) {
        case ROLLBACK, PROMOTE, PAUSE_MISMATCH, PAUSE_DEGRADED -> {
          return new End(d.action(),
              d.tests().stream().filter(TestResult::degraded).map(TestResult::metric).toList());
        }
        case ADVANCE -> {
          step++;
          stepStart = t;
          stable = OutcomeAggregates.EMPTY;
          candidate = OutcomeAggregates.EMPTY;
        }
        case WAIT -> { }
      }
    }
    return new End(Action.WAIT, List.of());
  }

  /** A session's success, rating (1..5) and log-normal latency around 1.2 s. */
  static OutcomeAggregates plain(OutcomeAggregates side, boolean success, SplittableRandom rnd) {
    double rating = 1 + Math.min(4, Math.floor(rnd.nextDouble() * 5));
    double latency = 1200 * Math.exp(0.5 * MsprtTest.gaussian(rnd));
    return side.add(success, rating, 0, 0, latency);
  }
}
