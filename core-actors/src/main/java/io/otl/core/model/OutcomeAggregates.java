package io.otl.core.model;

import com.fasterxml.jackson.annotation.JsonInclude;

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
 *   <li><b>upstream-error-rate</b> (guardrail): over the sessions with at least one gateway model
 *       call, the mean of each session's failed share of its calls. Sessions, not calls, are the
 *       independent units (one broken conversation retries many times), so the test's variance
 *       comes from the per-session shares (sum of squares kept).
 *   <li><b>tokens-per-session</b> (guardrail): over the sessions whose tokens the gateway counted,
 *       the mean tokens (shown) and the mean and variance of {@code log(1 + tokens)} (tested:
 *       token counts are heavy-tailed like latency).
 * </ul>
 *
 * <p>The guardrail components are 0 in aggregates written before they existed (snapshots): no
 * observations, which is what those sessions had. They are left out of the JSON while 0, so a
 * snapshot without gateway figures is written as before.
 */
public record OutcomeAggregates(
    long sessions,
    long resultsKnown,
    long successes,
    long satisfactionCount,
    double satisfactionSum,
    double satisfactionSumOfSquares,
    LatencyHistogram latency,
    @JsonInclude(JsonInclude.Include.NON_DEFAULT) long callSessions,
    @JsonInclude(JsonInclude.Include.NON_DEFAULT) double errorShareSum,
    @JsonInclude(JsonInclude.Include.NON_DEFAULT) double errorShareSumOfSquares,
    @JsonInclude(JsonInclude.Include.NON_DEFAULT) long tokenSessions,
    @JsonInclude(JsonInclude.Include.NON_DEFAULT) double tokenSum,
    @JsonInclude(JsonInclude.Include.NON_DEFAULT) double logTokenSum,
    @JsonInclude(JsonInclude.Include.NON_DEFAULT) double logTokenSumOfSquares,
    // Of {@code sessions}, those that started before the step began (0 in aggregates written before
    // it was kept): they were routed at an earlier step's ratio, so the sample-ratio check leaves them out.
    @JsonInclude(JsonInclude.Include.NON_DEFAULT) long carriedOver) {

  public static final OutcomeAggregates EMPTY =
      new OutcomeAggregates(0, 0, 0, 0, 0, 0, LatencyHistogram.EMPTY, 0, 0, 0, 0, 0, 0, 0, 0);

  /** Aggregates without guardrail figures (as before the guardrails). */
  public OutcomeAggregates(long sessions, long resultsKnown, long successes, long satisfactionCount,
      double satisfactionSum, double satisfactionSumOfSquares, LatencyHistogram latency) {
    this(sessions, resultsKnown, successes, satisfactionCount, satisfactionSum,
        satisfactionSumOfSquares, latency, 0, 0, 0, 0, 0, 0, 0, 0);
  }

  /** The sessions routed at this step's ratio: what the sample-ratio check counts. */
  public long routedInStep() {
    return sessions - carriedOver;
  }

  /** This aggregate with its last added session counted as started before the step. */
  public OutcomeAggregates carriedOverOne() {
    return new OutcomeAggregates(sessions, resultsKnown, successes, satisfactionCount, satisfactionSum,
        satisfactionSumOfSquares, latency, callSessions, errorShareSum, errorShareSumOfSquares, tokenSessions,
        tokenSum, logTokenSum, logTokenSumOfSquares, carriedOver + 1);
  }

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
    return add(success, rating, thumbsUp, thumbsDown, latencyP95Ms, null, null, null);
  }

  /**
   * Adds one session.
   *
   * @param modelCalls gateway model calls of the session (null or 0: no gateway figures)
   * @param upstreamErrors how many of them failed upstream
   * @param tokens prompt + completion tokens the gateway counted, null when unknown
   */
  /** The satisfaction score of a session already counted, from feedback that came after its outcome. */
  public OutcomeAggregates addSatisfaction(Double rating, int thumbsUp, int thumbsDown) {
    Double score = satisfactionScore(rating, thumbsUp, thumbsDown);
    if (score == null) return this;
    return new OutcomeAggregates(sessions, resultsKnown, successes, satisfactionCount + 1, satisfactionSum + score,
        satisfactionSumOfSquares + score * score, latency, callSessions, errorShareSum, errorShareSumOfSquares,
        tokenSessions, tokenSum, logTokenSum, logTokenSumOfSquares, carriedOver);
  }

  public OutcomeAggregates add(Boolean success, Double rating, int thumbsUp, int thumbsDown,
      Double latencyP95Ms, Integer modelCalls, Integer upstreamErrors, Long tokens) {
    Double score = satisfactionScore(rating, thumbsUp, thumbsDown);
    boolean called = modelCalls != null && modelCalls > 0;
    double share = called
        ? Math.min(1.0, Math.max(0, upstreamErrors == null ? 0 : upstreamErrors) / (double) modelCalls)
        : 0;
    boolean counted = tokens != null && tokens >= 0;
    double logTokens = counted ? Math.log1p(tokens) : 0;
    return new OutcomeAggregates(
        sessions + 1,
        resultsKnown + (success == null ? 0 : 1),
        successes + (Boolean.TRUE.equals(success) ? 1 : 0),
        satisfactionCount + (score == null ? 0 : 1),
        satisfactionSum + (score == null ? 0 : score),
        satisfactionSumOfSquares + (score == null ? 0 : score * score),
        latencyP95Ms == null ? latency : latency.add(latencyP95Ms),
        callSessions + (called ? 1 : 0),
        errorShareSum + share,
        errorShareSumOfSquares + share * share,
        tokenSessions + (counted ? 1 : 0),
        tokenSum + (counted ? tokens : 0),
        logTokenSum + logTokens,
        logTokenSumOfSquares + logTokens * logTokens,
        carriedOver);
  }

  /** Number of observations of one metric. */
  public long samples(Metric metric) {
    return switch (metric) {
      case TASK_SUCCESS_RATE -> resultsKnown;
      case USER_SATISFACTION -> satisfactionCount;
      case RESPONSE_LATENCY -> latency.total();
      case UPSTREAM_ERROR_RATE -> callSessions;
      case TOKENS_PER_SESSION -> tokenSessions;
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
      case UPSTREAM_ERROR_RATE -> errorShareSum / callSessions;
      case TOKENS_PER_SESSION -> tokenSum / tokenSessions;
    };
  }

  /** Unbiased sample variance of the satisfaction scores (0 with fewer than two). */
  public double satisfactionVariance() {
    return variance(satisfactionCount, satisfactionSum, satisfactionSumOfSquares);
  }

  /** Unbiased sample variance of the per-session upstream error shares. */
  public double errorShareVariance() {
    return variance(callSessions, errorShareSum, errorShareSumOfSquares);
  }

  /** Mean of {@code log(1 + tokens)} over the sessions with a token count (NaN without). */
  public double logTokenMean() {
    return logTokenSum / tokenSessions;
  }

  /** Unbiased sample variance of {@code log(1 + tokens)}. */
  public double logTokenVariance() {
    return variance(tokenSessions, logTokenSum, logTokenSumOfSquares);
  }

  private static double variance(long n, double sum, double sumOfSquares) {
    if (n < 2) {
      return 0;
    }
    double mean = sum / n;
    return Math.max(0, (sumOfSquares - n * mean * mean) / (n - 1));
  }
}
