package io.otl.core.model;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The online/offline metrics a model version is judged on. The JSON and configuration name is
 * {@link #key()} ({@code task-success-rate}, {@code user-satisfaction}, {@code response-latency}).
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
  RESPONSE_LATENCY("response-latency", false, true);

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

  @JsonCreator
  public static Metric fromKey(String key) {
    for (Metric m : values()) {
      if (m.key.equals(key) || m.name().equals(key)) {
        return m;
      }
    }
    throw new IllegalArgumentException(
        "unknown metric '" + key + "'; allowed: " + allowedKeys());
  }

  public static String allowedKeys() {
    return Arrays.stream(values()).map(Metric::key).collect(Collectors.joining(", "));
  }
}
