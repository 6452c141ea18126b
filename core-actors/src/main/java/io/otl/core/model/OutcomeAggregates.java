package io.otl.core.model;

/**
 * Online metrics of one version over a set of sessions, in constant space.
 *
 * <ul>
 *   <li><b>task-success-rate</b> = successes / sessions whose result is known ({@code success}
 *       not null).
 *   <li><b>user-satisfaction</b>: each session with feedback gets one score in [0, 1], the mean of
 *       the components it has: the rating normalised as {@code (rating − 1) / 4} (1 → 0, 3 → 0.5,
 *       5 → 1) and the thumbs-up share {@code up / (up + down)}. A session with neither has no
 *       score. The version's satisfaction is the mean score over the sessions that have one; the
 *       sum of squares is kept for the variance of the test.
 *   <li><b>response-latency</b>: the p95, over sessions, of each session's own p95 latency, from a
 *       fixed-bucket {@link LatencyHistogram}.
 * </ul>
 */
public record OutcomeAggregates(
    long sessions,
    long resultsKnown,
    long successes,
    long satisfactionCount,
    double satisfactionSum,
    double satisfactionSumOfSquares,
    LatencyHistogram latency) {

  public static final OutcomeAggregates EMPTY =
      new OutcomeAggregates(0, 0, 0, 0, 0, 0, LatencyHistogram.EMPTY);

  public OutcomeAggregates {
    latency = latency == null ? LatencyHistogram.EMPTY : latency;
  }

  /** The satisfaction score of one session, or null when it has no rating and no thumbs. */
  public static Double satisfactionScore(Double rating, int thumbsUp, int thumbsDown) {
    double sum = 0;
    int parts = 0;
    if (rating != null) {
      sum += (rating - 1) / 4;
      parts++;
    }
    if (thumbsUp + thumbsDown > 0) {
      sum += (double) thumbsUp / (thumbsUp + thumbsDown);
      parts++;
    }
    return parts == 0 ? null : sum / parts;
  }

  public OutcomeAggregates add(
      Boolean success, Double rating, int thumbsUp, int thumbsDown, Double latencyP95Ms) {
    Double score = satisfactionScore(rating, thumbsUp, thumbsDown);
    return new OutcomeAggregates(
        sessions + 1,
        resultsKnown + (success == null ? 0 : 1),
        successes + (Boolean.TRUE.equals(success) ? 1 : 0),
        satisfactionCount + (score == null ? 0 : 1),
        satisfactionSum + (score == null ? 0 : score),
        satisfactionSumOfSquares + (score == null ? 0 : score * score),
        latencyP95Ms == null ? latency : latency.add(latencyP95Ms));
  }

  /** Number of observations of one metric. */
  public long samples(Metric metric) {
    return switch (metric) {
      case TASK_SUCCESS_RATE -> resultsKnown;
      case USER_SATISFACTION -> satisfactionCount;
      case RESPONSE_LATENCY -> latency.total();
    };
  }

  /** The metric's value, or null without observations. */
  public Double value(Metric metric) {
    if (samples(metric) == 0) {
      return null;
    }
    return switch (metric) {
      case TASK_SUCCESS_RATE -> (double) successes / resultsKnown;
      case USER_SATISFACTION -> satisfactionSum / satisfactionCount;
      case RESPONSE_LATENCY -> latency.quantile(0.95);
    };
  }

  /** Unbiased sample variance of the satisfaction scores (0 with fewer than two). */
  public double satisfactionVariance() {
    if (satisfactionCount < 2) {
      return 0;
    }
    double mean = satisfactionSum / satisfactionCount;
    double v = (satisfactionSumOfSquares - satisfactionCount * mean * mean) / (satisfactionCount - 1);
    return Math.max(0, v);
  }
}
