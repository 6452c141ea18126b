package io.otl.node.config;

import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The rule type and the rules any setting may use (booleans, strings, numbers, durations, lists),
 * with the value conversions they share. Kept apart from the key table so a reader checking which
 * keys exist does not wade through how a number is parsed.
 */
final class ConfigRules {

  /** Added to every duration requirement, so the message shows the accepted spellings. */
  private static final String DURATION_EXAMPLES = " (e.g. 500ms, 30s, 5m, 2h, 7d)";

  /**
   * The longest a duration that drives a timer or an ask may be. Pekko's scheduler cannot wait more
   * than Integer.MAX_VALUE ticks of 10 ms (about 248 days): an actor timer asked to wait longer throws,
   * and an entity that schedules it at recovery never starts again (a step-duration of 999999999d, sent
   * with PUT /v1/training/{agentId}/policy, once stopped an agent's ModelVersion for good).
   */
  static final Duration LONGEST_TIMER = Duration.ofDays(248);

  /**
   * The longest a duration that is only added to a point in time may be (a feedback window, a
   * retention, a half-life): ten years, far from where {@code Instant} arithmetic overflows.
   */
  static final Duration LONGEST_SPAN = Duration.ofDays(3650);

  private ConfigRules() {}

  /** Checks one value; returns it typed, or null after recording an error. */
  @FunctionalInterface
  interface Rule {
    Object check(SettingsCheck c, String key, ConfigValue value);
  }

  static Rule bool() {
    return (c, key, v) -> {
      Boolean b = asBoolean(v);
      if (b == null) {
        c.error(key, v, "true or false");
      }
      return b;
    };
  }

  static Rule oneOf(String... allowed) {
    List<String> values = List.of(allowed);
    return (c, key, v) -> {
      String s = asScalarString(v);
      if (s == null || !values.contains(s)) {
        c.error(key, v, "one of " + String.join(", ", values));
        return null;
      }
      return s;
    };
  }

  static Rule string(boolean nonEmpty) {
    return (c, key, v) -> {
      String s = asScalarString(v);
      if (s == null || nonEmpty && s.isBlank()) {
        c.error(key, v, nonEmpty ? "a non-empty string" : "a string");
        return null;
      }
      return s;
    };
  }

  /**
   * A bearer secret ({@code auth.token}, {@code auth.metrics-token}): a string that neither starts nor
   * ends with white space or a control character. The Authorization header's token is read trimmed,
   * so such a token could never match: every request was a 401 "the bearer token is wrong" (trial t34,
   * e.g. a token read from a secret file that ends in a newline). The value is never shown.
   */
  static Rule bearerSecret() {
    return secret(ConfigRules::padded, PADDED);
  }

  /** A text secret, refused with {@code requirement} (which names no value) when {@code refused} says so. */
  private static Rule secret(java.util.function.Predicate<String> refused, String requirement) {
    Rule text = string(false);
    return (c, key, v) -> {
      Object s = text.check(c, key, v);
      if (s instanceof String secret && refused.test(secret)) {
        c.error(key, v, requirement);
        return null;
      }
      return s;
    };
  }

  /** What a bearer secret must be (the message names no value: secrets are shown masked). */
  static final String PADDED = "a token without white space or a control character (a newline …) at its start or"
      + " end: the Authorization header's token is read trimmed, so no request could match it; remove it";

  /** Whether a secret has white space or a control character at its start or end. */
  static boolean padded(String secret) {
    return !secret.isEmpty() && !(secret.equals(secret.trim()) && secret.equals(secret.strip()));
  }

  /**
   * A secret the node sends ({@code gateway.upstream-api-key}, the vLLM and Trinity keys): it goes into an
   * {@code Authorization: Bearer} header, which cannot carry a control character, and whose value the
   * server reads trimmed. A newline inside was accepted at start and made every call's header invalid
   * (trial t61). The value is never shown.
   */
  static Rule headerSecret() {
    return secret(ConfigRules::unsendable, UNSENDABLE);
  }

  /** What a secret sent in a header must be (the message names no value). */
  static final String UNSENDABLE = "a key without a control character (newline, tab …) anywhere or white space at its"
      + " start or end: it is sent in an Authorization header, which cannot carry it; remove it";

  /** Whether a secret cannot be sent as written in an HTTP header. */
  static boolean unsendable(String secret) {
    return padded(secret) || io.otl.core.Ids.hasControlCharacter(secret);
  }

  /**
   * A model name (a base model, a served model, a teacher, a scheduler or workflow name): a string
   * without control characters, since it is sent upstream, rendered into Trinity's YAML and logged
   * as written. A newline was accepted and then split log lines and broke the requests it went into.
   */
  static Rule name(boolean nonEmpty) {
    Rule text = string(nonEmpty);
    return (c, key, v) -> {
      Object s = text.check(c, key, v);
      if (s instanceof String name && io.otl.core.Ids.hasControlCharacter(name)) {
        c.error(key, v, "a name without control characters (newline, tab …)");
        return null;
      }
      return s;
    };
  }

  /** A number within optional bounds; null bounds are open-ended. */
  static Rule number(Double min, boolean minInclusive, Double max, boolean maxInclusive) {
    String requirement;
    if (min != null && max != null) {
      requirement = "a number in " + (minInclusive ? "[" : "(") + format(min) + ", "
          + format(max) + (maxInclusive ? "]" : ")");
    } else if (min != null) {
      requirement = "a number " + (minInclusive ? ">= " : "> ") + format(min);
    } else if (max != null) {
      requirement = "a number " + (maxInclusive ? "<= " : "< ") + format(max);
    } else {
      requirement = "a number";
    }
    return (c, key, v) -> {
      Double d = asNumber(v);
      boolean ok = d != null
          && (min == null || (minInclusive ? d >= min : d > min))
          && (max == null || (maxInclusive ? d <= max : d < max));
      if (!ok) {
        c.error(key, v, requirement);
        return null;
      }
      return d;
    };
  }

  static Rule integerAtLeast(int min) {
    return (c, key, v) -> {
      Double d = asNumber(v);
      if (d == null || d != Math.rint(d) || d < min || d > Integer.MAX_VALUE) {
        // past the largest, ">= 1" alone described a value that meets it (trial t9)
        c.error(key, v, d != null && d > Integer.MAX_VALUE ? "an integer from " + min + " to " + Integer.MAX_VALUE
            : "an integer >= " + min);
        return null;
      }
      return d.intValue();
    };
  }

  static Rule integerBetween(int min, int max) {
    return (c, key, v) -> {
      Double d = asNumber(v);
      if (d == null || d != Math.rint(d) || d < min || d > max) {
        c.error(key, v, "an integer from " + min + " to " + max);
        return null;
      }
      return d.intValue();
    };
  }

  /** A duration that drives a timer or an ask: at most {@link #LONGEST_TIMER}. */
  static Rule duration(boolean zeroAllowed) {
    return duration(zeroAllowed, LONGEST_TIMER);
  }

  static Rule duration(boolean zeroAllowed, Duration max) {
    String requirement = "a duration " + (zeroAllowed ? ">= 0" : "> 0") + " and at most "
        + max.toDays() + "d" + DURATION_EXAMPLES;
    return (c, key, v) -> {
      // HOCON reads a bare number as milliseconds: {"model-update.step-duration": 5} in a policy PUT, or
      // step-duration: 3600 in an application.yml, was taken as 5 ms / 3.6 s, a unit nobody wrote
      // (trial t35). A duration carries its unit.
      // The same number as a string ("5": YAML quotes, a -D property, an environment variable).
      // Zero is zero in any unit.
      String raw = v == null ? "" : String.valueOf(v.unwrapped());
      if (v != null && (v.valueType() == com.typesafe.config.ConfigValueType.NUMBER && !BareDurations.isZero(raw)
          || v.valueType() == com.typesafe.config.ConfigValueType.STRING && BareDurations.withoutUnit(raw))) {
        c.error(key, v, requirement + "; a bare number has no unit (it would be read as milliseconds): "
            + "write the unit, as a string such as \"30s\"");
        return null;
      }
      Duration d;
      try {
        d = c.config.getDuration(key);
      } catch (ConfigException e) {
        c.error(key, v, requirement);
        return null;
      }
      if (d.isNegative() || !zeroAllowed && d.isZero() || d.compareTo(max) > 0) {
        c.error(key, v, requirement);
        return null;
      }
      return d;
    };
  }

  static Rule listOf(String... allowed) {
    List<String> values = List.of(allowed);
    String requirement = "one of " + String.join(", ", values);
    return (c, key, v) -> {
      List<ConfigValue> list = c.list(key, v, "a list of: " + String.join(", ", values));
      if (list == null) {
        return null;
      }
      List<String> out = new ArrayList<>();
      for (int i = 0; i < list.size(); i++) {
        String s = asScalarString(list.get(i));
        if (s == null || !values.contains(s)) {
          c.error(key + "[" + i + "]", list.get(i), requirement);
        } else {
          out.add(s);
        }
      }
      return out.size() == list.size() ? out : null;
    };
  }

  static Rule regexList() {
    return (c, key, v) -> {
      List<ConfigValue> list = c.list(key, v, "a list of Java regular expressions");
      if (list == null) {
        return null;
      }
      boolean ok = true;
      for (int i = 0; i < list.size(); i++) {
        String elementKey = key + "[" + i + "]";
        ConfigValue element = list.get(i);
        String s = asScalarString(element);
        if (s == null || s.isEmpty()) {
          c.error(elementKey, element, "a non-empty Java regular expression");
          ok = false;
          continue;
        }
        try {
          Pattern.compile(s);
        } catch (PatternSyntaxException e) {
          c.error(elementKey, element, "a valid Java regular expression (" + e.getDescription()
              + (e.getIndex() >= 0 ? " near index " + e.getIndex() : "") + ")");
          ok = false;
        }
      }
      return ok ? list : null;
    };
  }

  static Rule anySection() {
    return (c, key, v) -> {
      if (v.valueType() != ConfigValueType.OBJECT) {
        c.error(key, v, "a section of key = value settings");
        return null;
      }
      return v.unwrapped();
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Value conversion, with the same leniency as Typesafe Config's getters (so -D overrides, which
  // are always strings, work), but without silent truncation.

  static Double asNumber(ConfigValue v) {
    if (v.valueType() == ConfigValueType.NUMBER) {
      double d = ((Number) v.unwrapped()).doubleValue();
      return Double.isFinite(d) ? d : null;
    }
    if (v.valueType() == ConfigValueType.STRING) {
      String s = ((String) v.unwrapped()).trim();
      if (!s.matches("[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?")) {
        return null;
      }
      double d = Double.parseDouble(s);
      return Double.isFinite(d) ? d : null;
    }
    return null;
  }

  private static Boolean asBoolean(ConfigValue v) {
    if (v.valueType() == ConfigValueType.BOOLEAN) {
      return (Boolean) v.unwrapped();
    }
    if (v.valueType() == ConfigValueType.STRING) {
      switch (((String) v.unwrapped()).trim()) {
        case "true": case "yes": case "on":
          return true;
        case "false": case "no": case "off":
          return false;
        default:
          return null;
      }
    }
    return null;
  }

  /** Strings, and numbers or booleans read as strings (as Typesafe's getString does). */
  static String asScalarString(ConfigValue v) {
    switch (v.valueType()) {
      case STRING:
        return (String) v.unwrapped();
      case NUMBER:
      case BOOLEAN:
        return v.unwrapped().toString();
      default:
        return null;
    }
  }

  static String format(double d) {
    return BigDecimal.valueOf(d).stripTrailingZeros().toPlainString();
  }
}
