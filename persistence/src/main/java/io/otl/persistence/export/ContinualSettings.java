package io.otl.persistence.export;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.Locale;

/**
 * Continual training keys of {@code agentscope.training.training-runner} (issue #16):
 * {@code start-from} (stable | base), {@code replay-fraction}, {@code data-half-life},
 * {@code eval-fraction}. Bad values are refused with the key and what is allowed.
 */
public record ContinualSettings(StartFrom startFrom, double replayFraction, Duration dataHalfLife, double evalFraction) {

  public enum StartFrom {
    STABLE,
    BASE;

    public String configName() {
      return name().toLowerCase(Locale.ROOT);
    }

    static StartFrom parse(String value) {
      for (StartFrom s : values()) {
        if (s.configName().equals(value.strip().toLowerCase(Locale.ROOT))) return s;
      }
      throw new IllegalArgumentException("start-from must be one of stable, base; was '" + value + "'");
    }
  }

  /** The reference.conf defaults. */
  public static final ContinualSettings DEFAULTS =
      new ContinualSettings(StartFrom.STABLE, 0.2, Duration.ofDays(14), 0.1);

  /** No replay, no held-out set, start from base: what an export of a job looked like before. */
  public static final ContinualSettings NONE = new ContinualSettings(StartFrom.BASE, 0, Duration.ofDays(14), 0);

  public ContinualSettings {
    java.util.Objects.requireNonNull(startFrom, "start-from");
    if (!(replayFraction >= 0 && replayFraction < 1)) {
      throw new IllegalArgumentException("replay-fraction must be in [0, 1), was " + replayFraction);
    }
    if (!(evalFraction >= 0 && evalFraction < 1)) {
      throw new IllegalArgumentException("eval-fraction must be in [0, 1), was " + evalFraction);
    }
    if (dataHalfLife == null || dataHalfLife.isNegative() || dataHalfLife.isZero()) {
      throw new IllegalArgumentException("data-half-life must be a positive duration (e.g. 14d), was " + dataHalfLife);
    }
  }

  /** Reads the training-runner section; missing keys take {@link #DEFAULTS}. */
  public static ContinualSettings fromConfig(Config c) {
    StartFrom from = c.hasPath("start-from") ? StartFrom.parse(c.getString("start-from")) : DEFAULTS.startFrom;
    double replay = c.hasPath("replay-fraction") ? number(c, "replay-fraction") : DEFAULTS.replayFraction;
    Duration halfLife = DEFAULTS.dataHalfLife;
    if (c.hasPath("data-half-life")) {
      try {
        halfLife = c.getDuration("data-half-life");
      } catch (com.typesafe.config.ConfigException e) {
        throw new IllegalArgumentException("data-half-life must be a duration such as 14d or 336h, was '"
            + c.getValue("data-half-life").unwrapped() + "'");
      }
    }
    double eval = c.hasPath("eval-fraction") ? number(c, "eval-fraction") : DEFAULTS.evalFraction;
    return new ContinualSettings(from, replay, halfLife, eval);
  }

  private static double number(Config c, String key) {
    try {
      return c.getDouble(key);
    } catch (com.typesafe.config.ConfigException e) {
      throw new IllegalArgumentException(key + " must be a number in [0, 1), was '" + c.getValue(key).unwrapped() + "'");
    }
  }
}
