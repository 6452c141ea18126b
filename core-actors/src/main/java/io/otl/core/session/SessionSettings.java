package io.otl.core.session;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.List;

/** What an AgentSession needs from {@code agentscope.training.data-collector} (design §8). */
public record SessionSettings(
    String collectMode,
    double sampleRate,
    boolean desensitizeEnabled,
    List<String> desensitizePatterns,
    List<String> customPatterns,
    int maxTextLength,
    Duration idleTimeout,
    Duration feedbackWindow,
    Duration passivateAfter,
    RewardWeights weights) {

  public SessionSettings {
    if (!collectMode.equals("full") && !collectMode.equals("sampled")) {
      throw new IllegalArgumentException(
          "data-collector.collect-mode = " + collectMode + ": allowed values are full, sampled");
    }
    if (!(sampleRate >= 0 && sampleRate <= 1)) {
      throw new IllegalArgumentException(
          "data-collector.sample-rate = " + sampleRate + ": must be a number in [0, 1]");
    }
    if (maxTextLength < 1) {
      throw new IllegalArgumentException(
          "data-collector.max-text-length = " + maxTextLength + ": must be at least 1");
    }
    if (idleTimeout.isZero() || idleTimeout.isNegative()) {
      throw new IllegalArgumentException(
          "data-collector.session.idle-timeout = " + idleTimeout + ": must be positive");
    }
    desensitizePatterns = List.copyOf(desensitizePatterns);
    customPatterns = List.copyOf(customPatterns);
  }

  /** Reads the settings from the {@code agentscope.training} block. */
  public static SessionSettings fromConfig(Config training) {
    Config dc = training.getConfig("data-collector");
    Config w = dc.getConfig("reward.weights");
    return new SessionSettings(
        dc.getString("collect-mode"),
        dc.getDouble("sample-rate"),
        dc.getBoolean("desensitize.enabled"),
        dc.getStringList("desensitize.patterns"),
        dc.getStringList("desensitize.custom"),
        dc.getInt("max-text-length"),
        dc.getDuration("session.idle-timeout"),
        dc.getDuration("session.feedback-window"),
        dc.getDuration("session.passivate-after"),
        new RewardWeights(
            w.getDouble("thumbs-up"),
            w.getDouble("thumbs-down"),
            w.getDouble("rating"),
            w.getDouble("adopted"),
            w.getDouble("repeated-question"),
            w.getDouble("human-handoff"),
            w.getDouble("success"),
            w.getDouble("failure"),
            w.getDouble("timeout")));
  }

  /** One per distinct configuration (it is immutable): every session entity asks at its start. */
  public Desensitizer desensitizer() {
    return DESENSITIZERS.computeIfAbsent(List.of(desensitizeEnabled, desensitizePatterns, customPatterns),
        k -> new Desensitizer(desensitizeEnabled, desensitizePatterns, customPatterns));
  }

  private static final java.util.Map<List<Object>, Desensitizer> DESENSITIZERS =
      new java.util.concurrent.ConcurrentHashMap<>();

  public SessionSampler sampler() {
    return new SessionSampler(collectMode, sampleRate);
  }

  /** The weights of design §3.1.1; the rating weight multiplies {@code (value - 3) / 2}. */
  public record RewardWeights(
      double thumbsUp,
      double thumbsDown,
      double rating,
      double adopted,
      double repeatedQuestion,
      double humanHandoff,
      double success,
      double failure,
      double timeout) {
    public static RewardWeights defaults() {
      return new RewardWeights(1, -1, 1, 0.5, -0.5, -0.5, 1, -1, -0.5);
    }
  }
}
