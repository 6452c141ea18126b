package io.otl.bench;

import com.typesafe.config.ConfigFactory;
import io.otl.core.model.CanaryRules;
import io.otl.core.model.CanaryRules.Action;
import io.otl.core.model.CanaryRules.Method;
import io.otl.core.model.ModelSettings;
import io.otl.core.model.OutcomeAggregates;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Bench C1: simulated canary rollouts through the real step rule ({@link CanaryRules}, the
 * function ModelVersion calls) and the real tests, to measure the error rates the statistics
 * promise. Pure computation, seeded, no database, no actor.
 *
 * <p>One rollout: sessions arrive as a Poisson stream ({@code --traffic} per hour, default 200),
 * each routed to the candidate with the current step's ratio (what the router's hash does); its
 * outcome is recorded at once and the rule looks after every outcome, as the entity does. Stable:
 * success 0.8; a rating 1–5 on 60 % of sessions (mean score 0.74); per-session p95 latency
 * log-normal (median 1,200 ms, σ 0.5); through the inference gateway, 1–6 model calls per
 * session, each failing upstream with chance 2 %, and tokens per session log-normal (median 1,500,
 * σ 0.6) — the guardrails' figures. Settings: reference.conf defaults (5 % → 20 % → 50 % → 100 %,
 * 1 h steps, 100 samples per step, confidence 0.95, tolerances 0.02 / 0.05 / 10 %, guardrails
 * 0.02 / 20 %).
 *
 * <p>A rollout ends rolled back, paused (sample-ratio guardrail or degraded with rollback off),
 * promoted, or stalled after {@code --max-days}.
 */
final class C1Canary {
  private C1Canary() {}

  static final double STABLE_SUCCESS = 0.8;
  static final double LATENCY_MEDIAN_MS = 1200;
  static final double LATENCY_SIGMA = 0.5;
  private static final double[] RATING_CDF = {0.05, 0.12, 0.30, 0.62, 1.0};

  static final double STABLE_CALL_ERROR = 0.02;
  static final double TOKENS_MEDIAN = 1500;
  static final double TOKENS_SIGMA = 0.6;

  /**
   * A candidate: success-rate points lost, latency factor, points added to the per-call upstream
   * failure chance and tokens factor.
   */
  record Scenario(String name, double successDrop, double latencyFactor, double errorRise, double tokenFactor) {
    Scenario(String name, double successDrop, double latencyFactor) {
      this(name, successDrop, latencyFactor, 0, 1);
    }

    boolean guardrail() {
      return errorRise != 0 || tokenFactor != 1;
    }
  }

  enum End { ROLLED_BACK, PAUSED, PROMOTED, STALLED }

  record Run(End end, double hours, long candidateSessions) {}

  static Result run(Args args) {
    Locale.setDefault(Locale.ROOT);
    int aa = args.integer("rollouts", 2000);
    int powerRollouts = args.integer("power-rollouts", 300);
    long seed = args.integer("seed", 19);
    double traffic = args.number("traffic", 200);
    double maxDays = args.number("max-days", 30);
    ModelSettings settings = ModelSettings.defaults();

    Result r = new Result("C1", "canary false rollbacks and power (simulated rollouts)");
    r.figure("rollouts", aa).figure("powerRollouts", powerRollouts).figure("seed", seed)
        .figure("trafficPerHour", traffic).figure("plan", settings.steps().toString())
        .figure("minSamplesPerStep", settings.minSamplesPerStep())
        .figure("confidence", settings.confidence())
        .figure("tolerance", settings.tolerance().toString());

    Scenario equal = new Scenario("A/A (equal candidate)", 0, 1);
    Map<String, Object> table = new LinkedHashMap<>();
    Map<String, Object> aaSeq = summarize(simulate(settings, Method.SEQUENTIAL, equal, aa, seed, traffic, maxDays));
    Map<String, Object> aaNaive = summarize(simulate(settings, Method.FIXED_LEVEL, equal, aa, seed, traffic, maxDays));
    table.put("A/A sequential", aaSeq);
    table.put("A/A fixed-level (before #19)", aaNaive);
    row(equal.name(), "sequential", aaSeq);
    row(equal.name(), "fixed-level", aaNaive);

    List<Scenario> worse = List.of(
        new Scenario("success -2 points", 0.02, 1),
        new Scenario("success -5 points", 0.05, 1),
        new Scenario("success -10 points", 0.10, 1),
        new Scenario("latency +20%", 0, 1.2),
        new Scenario("latency +50%", 0, 1.5),
        new Scenario("upstream errors +5 points", 0, 1, 0.05, 1),
        new Scenario("upstream errors +10 points", 0, 1, 0.10, 1),
        new Scenario("tokens +50%", 0, 1, 0, 1.5));
    for (Scenario s : worse) {
      for (Method m : Method.values()) {
        if (m == Method.FIXED_LEVEL && s.guardrail()) {
          continue; // the rule before #19 had no guardrails: it would promote every such candidate
        }
        Map<String, Object> sum = summarize(simulate(settings, m, s, powerRollouts, seed + 1000, traffic, maxDays));
        table.put(s.name() + (m == Method.SEQUENTIAL ? " sequential" : " fixed-level (before #19)"), sum);
        row(s.name(), m == Method.SEQUENTIAL ? "sequential" : "fixed-level", sum);
      }
    }
    r.figure("scenarios", table);

    // How power is bought: more samples per step (each step lasts until both arms have them).
    int larger = args.integer("larger-min-samples", 400);
    int sensitivityRollouts = args.integer("sensitivity-rollouts", 100);
    if (sensitivityRollouts > 0) {
      ModelSettings big = ModelSettings.fromConfig(ConfigFactory.parseString(
              "model-update { min-samples-per-step = " + larger + " }")
          .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training")));
      Map<String, Object> sensitivity = new LinkedHashMap<>();
      for (Scenario s : List.of(equal, worse.get(1), worse.get(2), worse.get(3), worse.get(6))) {
        Map<String, Object> sum = summarize(simulate(big, Method.SEQUENTIAL, s, sensitivityRollouts, seed + 2000,
            traffic, maxDays));
        sensitivity.put(s.name() + " sequential", sum);
        row(s.name() + " @" + larger, "sequential", sum);
      }
      r.figure("minSamplesPerStep" + larger, sensitivity);
    }
    double falseRate = (double) aaSeq.get("rollbackRate");
    r.figure("falseRollbackRate", falseRate);
    r.figure("naiveFalseRollbackRate", aaNaive.get("rollbackRate"));
    r.headline = String.format("A/A false rollbacks %.4f (fixed-level test: %.4f)", falseRate, aaNaive.get("rollbackRate"));
    r.target = "<= " + String.format("%.2f", 1 - settings.confidence());
    r.pass = falseRate <= 1 - settings.confidence();
    return r;
  }

  private static void row(String scenario, String method, Map<String, Object> s) {
    System.out.printf("| %-22s | %-11s | rollback %6.4f | paused %6.4f | promoted %6.4f | stalled %d"
            + " | median candidate sessions to rollback %s | median hours to promote %s |%n",
        scenario, method, s.get("rollbackRate"), s.get("pauseRate"), s.get("promoteRate"), s.get("stalled"),
        s.get("medianCandidateSessionsToRollback"), s.get("medianHoursToPromote"));
    System.out.flush();
  }

  static List<Run> simulate(ModelSettings settings, Method method, Scenario scenario, int rollouts,
      long seed, double trafficPerHour, double maxDays) {
    // Each rollout has its own seeded stream, so running them in parallel (the common pool: one
    // thread per core) gives the same figures in the same order as running them one by one.
    return java.util.stream.IntStream.range(0, rollouts).parallel()
        .mapToObj(i -> rollout(settings, method, scenario, new SplittableRandom(seed * 1_000_003L + i),
            trafficPerHour, maxDays))
        .toList();
  }

  /** One rollout, looking after every outcome like the entity. */
  static Run rollout(ModelSettings settings, Method method, Scenario scenario, SplittableRandom rnd,
      double trafficPerHour, double maxDays) {
    List<Double> plan = settings.steps();
    double meanGapMs = 3_600_000 / trafficPerHour;
    long limit = (long) (maxDays * 86_400_000L);
    long t = 0;
    int step = 0;
    long stepStart = 0;
    long candidateSessions = 0;
    OutcomeAggregates stable = OutcomeAggregates.EMPTY;
    OutcomeAggregates candidate = OutcomeAggregates.EMPTY;
    while (t < limit) {
      t += (long) Math.ceil(-meanGapMs * Math.log(1 - rnd.nextDouble()));
      boolean toCandidate = rnd.nextDouble() < plan.get(step);
      double drop = toCandidate ? scenario.successDrop() : 0;
      double factor = toCandidate ? scenario.latencyFactor() : 1;
      boolean success = rnd.nextDouble() < STABLE_SUCCESS - drop;
      Double rating = rnd.nextDouble() < 0.6 ? rating(rnd) : null;
      double latency = factor * LATENCY_MEDIAN_MS * Math.exp(LATENCY_SIGMA * gaussian(rnd));
      int calls = 1 + rnd.nextInt(6);
      double callError = STABLE_CALL_ERROR + (toCandidate ? scenario.errorRise() : 0);
      int errors = 0;
      for (int k = 0; k < calls; k++) {
        errors += rnd.nextDouble() < callError ? 1 : 0;
      }
      long tokens = Math.round((toCandidate ? scenario.tokenFactor() : 1)
          * TOKENS_MEDIAN * Math.exp(TOKENS_SIGMA * gaussian(rnd)));
      if (toCandidate) {
        candidate = candidate.add(success, rating, 0, 0, latency, calls, errors, tokens);
        candidateSessions++;
      } else {
        stable = stable.add(success, rating, 0, 0, latency, calls, errors, tokens);
      }
      CanaryRules.Decision d = CanaryRules.decide(settings, method, plan, step,
          Instant.ofEpochMilli(stepStart), false, stable, candidate, false, Instant.ofEpochMilli(t));
      Action a = d.action();
      double hours = t / 3_600_000.0;
      if (a == Action.ROLLBACK) {
        return new Run(End.ROLLED_BACK, hours, candidateSessions);
      } else if (a == Action.PAUSE_DEGRADED || a == Action.PAUSE_MISMATCH) {
        return new Run(End.PAUSED, hours, candidateSessions);
      } else if (a == Action.PROMOTE) {
        return new Run(End.PROMOTED, hours, candidateSessions);
      } else if (a == Action.ADVANCE) {
        step++;
        stepStart = t;
        stable = OutcomeAggregates.EMPTY;
        candidate = OutcomeAggregates.EMPTY;
      }
    }
    return new Run(End.STALLED, t / 3_600_000.0, candidateSessions);
  }

  private static double rating(SplittableRandom rnd) {
    double u = rnd.nextDouble();
    for (int i = 0; i < RATING_CDF.length; i++) {
      if (u < RATING_CDF[i]) return i + 1;
    }
    return 5;
  }

  private static double gaussian(SplittableRandom rnd) {
    // Box–Muller; one draw per call keeps the stream simple to reproduce.
    double u1 = 1 - rnd.nextDouble();
    double u2 = rnd.nextDouble();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }

  static Map<String, Object> summarize(List<Run> runs) {
    int n = runs.size();
    long rolled = runs.stream().filter(x -> x.end() == End.ROLLED_BACK).count();
    long paused = runs.stream().filter(x -> x.end() == End.PAUSED).count();
    long promoted = runs.stream().filter(x -> x.end() == End.PROMOTED).count();
    long stalled = runs.stream().filter(x -> x.end() == End.STALLED).count();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("rollouts", n);
    m.put("rollbackRate", rate(rolled, n));
    m.put("rollbackRateStdError", Math.round(Math.sqrt(rate(rolled, n) * (1 - rate(rolled, n)) / n) * 10000) / 10000.0);
    m.put("pauseRate", rate(paused, n));
    m.put("promoteRate", rate(promoted, n));
    m.put("stalled", stalled);
    m.put("medianCandidateSessionsToRollback", median(runs, End.ROLLED_BACK, true));
    m.put("medianHoursToRollback", median(runs, End.ROLLED_BACK, false));
    m.put("medianHoursToPromote", median(runs, End.PROMOTED, false));
    m.put("p95HoursToPromote", quantile(runs, End.PROMOTED, 0.95));
    return m;
  }

  private static double rate(long k, int n) {
    return n == 0 ? 0 : Math.round(10000.0 * k / n) / 10000.0;
  }

  private static Double median(List<Run> runs, End end, boolean sessions) {
    double[] v = runs.stream().filter(x -> x.end() == end)
        .mapToDouble(x -> sessions ? x.candidateSessions() : x.hours()).sorted().toArray();
    if (v.length == 0) return null;
    double med = v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    return Math.round(med * 10) / 10.0;
  }

  private static Double quantile(List<Run> runs, End end, double q) {
    double[] v = runs.stream().filter(x -> x.end() == end).mapToDouble(Run::hours).sorted().toArray();
    if (v.length == 0) return null;
    return Math.round(v[Math.min(v.length - 1, (int) Math.ceil(q * v.length) - 1)] * 10) / 10.0;
  }

  /** Entry point from {@link Bench}: runs, writes {@code results/C1.json}, prints the figure last. */
  static void main(Args args) {
    Path dir = args.resultsDir();
    long started = System.nanoTime();
    Result r = run(args);
    r.figure("wallSeconds", (System.nanoTime() - started) / 1e9);
    r.publish(dir, "none (pure computation)");
    System.out.println(Result.header());
    System.out.println(r.row());
    System.out.println("C1 A/A falseRollbackRate " + r.figures.get("falseRollbackRate"));
  }
}
