package io.otl.core.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The online/offline metrics a model version is judged on. The JSON and configuration name is
 * {@link #key()} ({@code task-success-rate}, {@code user-satisfaction}, {@code response-latency}).
 * The two <b>guardrails</b> ({@code upstream-error-rate}, {@code tokens-per-session}) are not
 * configurable evaluation metrics: they are tested in every rollout step whose sessions carry
 * inference-gateway figures, in the same Holm family as the evaluation metrics, and never hold a
 * step back when no session carries them (docs/canary-statistics.md).
 */
public enum Metric {
  /** Successes / sessions with a known result (0–1, higher is better). Tolerance is absolute. */
  TASK_SUCCESS_RATE("task-success-rate", true, false),
  /**
   * Mean per-session satisfaction score (0–1, higher is better; see {@link OutcomeAggregates}).
   * Tolerance is absolute on the 0–1 scale.
   */
  USER_SATISFACTION("user-satisfaction", true, false),
  /** p95 of the per-session latency p95, in ms (lower is better). Tolerance is relative. */
  RESPONSE_LATENCY("response-latency", false, true),
  /**
   * Guardrail: mean over sessions of each session's share of gateway model calls that failed
   * upstream (an error, or a fallback to the stable); 0–1, lower is better; tolerance absolute.
   */
  UPSTREAM_ERROR_RATE("upstream-error-rate", false, false),
  /**
   * Guardrail (cost): prompt + completion tokens per session as counted by the gateway; lower is
   * better; tolerance relative, tested on the log scale like latency.
   */
  TOKENS_PER_SESSION("tokens-per-session", false, true);

  /** The guardrails, in the order they are tested. */
  public static final List<Metric> GUARDRAILS = List.of(UPSTREAM_ERROR_RATE, TOKENS_PER_SESSION);

  private final String key;
  private final boolean higherIsBetter;
  private final boolean relativeTolerance;

  Metric(String key, boolean higherIsBetter, boolean relativeTolerance) {
    this.key = key;
    this.higherIsBetter = higherIsBetter;
    this.relativeTolerance = relativeTolerance;
  }

  @JsonValue
  public String key() {
    return key;
  }

  public boolean higherIsBetter() {
    return higherIsBetter;
  }

  /** True when the tolerance is a fraction of the stable value, false when absolute. */
  public boolean relativeTolerance() {
    return relativeTolerance;
  }

  /** True for the guardrails, which are always tested and cannot be evaluation metrics. */
  public boolean guardrail() {
    return GUARDRAILS.contains(this);
  }

  @JsonCreator
  public static Metric fromKey(String key) {
    for (Metric m : values()) {
      if (m.key.equals(key) || m.name().equals(key)) {
        return m;
      }
    }
    throw new IllegalArgumentException(
        "unknown metric '" + key + "'; known: "
            + Arrays.stream(values()).map(Metric::key).collect(Collectors.joining(", ")));
  }

  /** The keys allowed in {@code evaluation-metrics} (every metric but the guardrails). */
  public static String allowedKeys() {
    return Arrays.stream(values()).filter(m -> !m.guardrail()).map(Metric::key)
        .collect(Collectors.joining(", "));
  }
}
