package io.otl.node.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigList;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigRenderOptions;
import com.typesafe.config.ConfigUtil;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import com.typesafe.config.ConfigValueType;
import io.otl.core.schedule.CronSchedule;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Checks {@code agentscope.training} (design §8) against the keys and values this node knows.
 *
 * <p>The config is first layered over the defaults of every module's {@code reference.conf}, so a file that
 * sets only a few keys is complete. Every wrong value is collected and reported at once in a
 * {@link ConfigValidationException}, each as {@code <full key> = <value>: must be <allowed>}
 * (secret values masked). Keys this node does not know are not errors: they are returned in the
 * {@link ValidationReport} by full name, with a suggestion when one is close.
 */
public final class TrainingSettingsValidator {

  /** The section this validator owns. */
  public static final String ROOT = "agentscope.training";

  /** Every module's reference.conf: the one place defaults live, with a comment per key. */
  private static final Config DEFAULTS = ConfigFactory.defaultReference();

  private static final List<String> TRIGGERS = List.of("threshold", "scheduled", "manual");

  private static final String DURATION_EXAMPLES = " (e.g. 500ms, 30s, 5m, 2h, 7d)";

  /** Rules by key relative to {@link #ROOT}, in the order errors are reported. */
  private static final Map<String, Rule> RULES = new LinkedHashMap<>();
  /** Every proper prefix of a rule key: the sections. */
  private static final Set<String> SECTIONS = new HashSet<>();

  static {
    rule("enabled", bool());
    rule("persistence", oneOf("h2", "postgres"));
    rule("db.url", string(false));
    rule("db.user", string(false));
    rule("db.password", string(false));
    rule("db.max-connections", integerAtLeast(1));
    rule("http.enabled", bool());
    rule("http.host", string(true));
    rule("http.port", integerAtLeast(0));
    rule("http.ask-timeout", duration(false));
    rule("http.shutdown-deadline", duration(true));
    rule("http.max-in-flight", integerAtLeast(1));
    rule("http.metrics-sample-interval", duration(false));
    rule("auth.token", string(false));
    rule("auth.protect-reads", bool());
    rule("auth.metrics-token", string(false));
    rule("http.metrics-top-agents", integerAtLeast(1));
    rule("http.max-json-depth", integerBetween(2, 1000));
    rule("otlp.port", integerAtLeast(-1));
    rule("otlp.max-decoded-bytes", integerAtLeast(1));
    String rs = "read-side.";
    rule(rs + "enabled", bool());
    rule(rs + "batch-offsets-every", integerAtLeast(1));
    rule(rs + "offset-interval", duration(false));
    rule(rs + "rescan-window", duration(false));
    rule(rs + "rescan-interval", duration(false));
    rule(rs + "parallelism", integerAtLeast(1));
    rule(rs + "delivery-timeout", duration(false));
    rule(rs + "min-backoff", duration(false));
    rule(rs + "max-backoff", duration(false));
    rule(rs + "resolve-msg-ids", bool());
    String k = "kafka.";
    rule(k + "enabled", bool());
    rule(k + "bootstrap-servers", string(true));
    rule(k + "group-id", string(true));
    rule(k + "group-instance-id", string(false));
    rule(k + "session-timeout", duration(false));
    for (String topic : List.of("agent-events", "dead-letter", "trajectories", "model-updates")) {
      rule(k + "topics." + topic, string(true));
    }
    rule(k + "parallelism", integerAtLeast(1));
    rule(k + "ingest.batch-size", integerAtLeast(1));
    rule(k + "ingest.batch-window", duration(true));
    rule(k + "commit.max-batch", integerAtLeast(1));
    rule(k + "commit.max-interval", duration(false));
    rule(k + "publish.offset-batch", integerAtLeast(1));
    rule(k + "publish.offset-interval", duration(false));
    rule(k + "restart.min-backoff", duration(false));
    rule(k + "restart.max-backoff", duration(false));
    // Passed verbatim to the Kafka clients (security.protocol, sasl.*); Kafka validates them.
    rule(k + "client", anySection());
    rule("cluster.bootstrap", oneOf("seed-nodes", "management"));
    rule("cluster.management.enabled", bool());
    rule("cluster.lease-window", duration(false));
    rule("cluster.lease-heartbeat", duration(false));
    rule("serving.backend", oneOf("auto", "static", "vllm-lora"));
    rule("serving.static.served-model", string(false));
    rule("serving.vllm.url", string(false));
    rule("serving.vllm.api-key", string(false));
    rule("serving.vllm.request-timeout", duration(false));
    rule("serving.retry.min-backoff", duration(false));
    rule("serving.retry.max-backoff", duration(false));
    rule("serving.retry.max-attempts", integerAtLeast(1));
    rule("simulator.enabled", bool());
    rule("simulator.host", string(true));
    rule("simulator.port", integerAtLeast(0));
    rule("simulator.work-dir", string(true));
    rule("simulator.pending", duration(true));
    rule("simulator.running", duration(true));
    rule("simulator.commit-batch", integerAtLeast(1));
    String gw = "gateway.";
    rule(gw + "enabled", bool());
    // agents.<agentId> { api-key, upstream-api-key }: keyed by agent id, so any names are allowed.
    rule(gw + "agents", anySection());
    // agents.<agentId> { training-runner keys }: checked key by key by AgentPolicies.
    rule("agents", anySection());
    rule(gw + "upstream-api-key", string(false));
    rule(gw + "default-agent", string(false));
    rule(gw + "timeout", duration(false));
    rule(gw + "max-body-bytes", integerAtLeast(1));
    rule(gw + "max-in-flight", integerAtLeast(1));
    rule(gw + "fallback-to-stable", bool());
    rule(gw + "capture-tokens", bool());

    String dc = "data-collector.";
    rule(dc + "collect-mode", oneOf("full", "sampled"));
    rule(dc + "sample-rate", number(0.0, true, 1.0, true));
    rule(dc + "store-type", storeType());
    rule(dc + "store-path", string(false));
    rule(dc + "store-endpoint", onlyForOss());
    rule(dc + "store-bucket", onlyForOss());
    rule(dc + "max-text-length", integerAtLeast(1));
    rule(dc + "max-events-per-request", integerAtLeast(1));
    rule(dc + "desensitize.enabled", bool());
    rule(dc + "desensitize.patterns", listOf("phone", "id_card", "email"));
    rule(dc + "desensitize.custom", regexList());
    rule(dc + "session.idle-timeout", duration(false));
    rule(dc + "session.feedback-window", duration(true));
    rule(dc + "session.passivate-after", duration(false));
    for (String weight : List.of("thumbs-up", "thumbs-down", "rating", "adopted",
        "repeated-question", "human-handoff", "success", "failure", "timeout")) {
      rule(dc + "reward.weights." + weight, number(null, false, null, false));
    }

    String tr = "training-runner.";
    rule(tr + "trinity-endpoint", httpUrl());
    rule(tr + "backend", oneOf("ray-jobs", "trinity-proxy"));
    rule(tr + "trigger.type", triggerTypes());
    rule(tr + "trigger.cron", cron());
    rule(tr + "trigger.min-samples", integerAtLeast(1));
    rule(tr + "trigger.missed-slots", oneOf("fire", "skip"));
    rule(tr + "trigger.zone", zone());
    rule(tr + "algorithm", oneOf("sft", "ppo", "grpo", "dpo", "distillation"));
    rule(tr + "base-model", string(true));
    rule(tr + "hyperparams.learning-rate", number(0.0, false, null, false));
    rule(tr + "hyperparams.batch-size", integerAtLeast(1));
    rule(tr + "hyperparams.epochs", integerAtLeast(1));
    rule(tr + "hyperparams.warmup-ratio", number(0.0, true, 1.0, true));
    rule(tr + "hyperparams.bench-metrics", benchMetrics());
    rule(tr + "min-quality", number(0.0, true, 1.0, true));
    rule(tr + "sft-min-reward", number(null, false, null, false));
    rule(tr + "dpo-min-margin", number(0.0, false, null, false));
    rule(tr + "start-from", oneOf("stable", "base"));
    rule(tr + "replay-fraction", number(0.0, true, 1.0, false));
    rule(tr + "data-half-life", duration(false));
    rule(tr + "eval-fraction", number(0.0, true, 1.0, false));
    rule(tr + "dataset-dir", string(false));
    rule(tr + "checkpoint-root-dir", string(false));
    rule(tr + "poll-interval", duration(false));
    rule(tr + "trinity.request-timeout", duration(false));
    rule(tr + "trinity.auth-token", string(false));
    rule(tr + "trinity.entrypoint-num-gpus", integerAtLeast(0));
    rule(tr + "trinity.node-num", integerAtLeast(1));
    rule(tr + "trinity.gpu-per-node", integerAtLeast(1));
    rule(tr + "submit-retry.min-backoff", duration(false));
    rule(tr + "submit-retry.max-backoff", duration(false));

    String mu = "model-update.";
    rule(mu + "auto-deploy", bool());
    rule(mu + "canary-ratio", number(0.0, false, 1.0, false));
    rule(mu + "rollback-on-degradation", bool());
    rule(mu + "evaluation-metrics",
        listOf("task-success-rate", "user-satisfaction", "response-latency"));
    rule(mu + "steps", steps());
    rule(mu + "step-duration", duration(false));
    rule(mu + "min-samples-per-step", integerAtLeast(1));
    rule(mu + "confidence", number(0.5, false, 1.0, false));
    // The last two are the guardrails: tolerances only, never evaluation-metrics.
    for (String metric : List.of("task-success-rate", "user-satisfaction", "response-latency",
        "upstream-error-rate", "tokens-per-session")) {
      rule(mu + "tolerance." + metric, number(0.0, true, null, false));
    }
    rule(mu + "retain-previous", duration(false));
    rule(mu + "offline-gate-tolerance", number(0.0, true, null, false));
  }

  private TrainingSettingsValidator() {}

  /** The defaults (every module's {@code reference.conf} on the classpath), resolved. */
  public static Config defaults() {
    return DEFAULTS;
  }

  /**
   * Validates {@code config} layered over {@link #defaults()}.
   *
   * @return the unknown keys and warnings when every known key has an allowed value
   * @throws ConfigValidationException listing every wrong value
   */
  public static ValidationReport validate(Config config) {
    Config merged = config.withFallback(DEFAULTS);
    Check check = new Check(merged);
    List<String> unknown = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    findUnknown(merged, check, unknown, warnings);
    for (Map.Entry<String, Rule> e : RULES.entrySet()) {
      String key = ROOT + "." + e.getKey();
      ConfigValue value;
      try {
        if (!merged.hasPathOrNull(key)) {
          continue;
        }
        value = merged.getIsNull(key) ? ConfigValueFactory.fromAnyRef(null) : merged.getValue(key);
      } catch (ConfigException.WrongType broken) {
        continue; // a section above it is not a section; reported by findUnknown
      }
      Object typed = e.getValue().check(check, key, value);
      if (typed != null) {
        check.typed.put(e.getKey(), typed);
      }
    }
    crossChecks(check);
    if (!check.errors.isEmpty()) {
      throw new ConfigValidationException(check.errors);
    }
    return new ValidationReport(unknown, warnings);
  }

  // ---------------------------------------------------------------------------------------------
  // Unknown keys

  private static void findUnknown(Config merged, Check check, List<String> unknown,
      List<String> warnings) {
    if (!merged.hasPathOrNull(ROOT)) {
      return;
    }
    ConfigValue root = merged.getIsNull(ROOT) ? ConfigValueFactory.fromAnyRef(null)
        : merged.getValue(ROOT);
    if (root.valueType() != ConfigValueType.OBJECT) {
      check.error(ROOT, root, "a section of settings");
      return;
    }
    walk((ConfigObject) root, new ArrayList<>(), check, unknown, warnings);
  }

  private static void walk(ConfigObject object, List<String> prefix, Check check,
      List<String> unknown, List<String> warnings) {
    for (Map.Entry<String, ConfigValue> e : object.entrySet()) {
      List<String> path = new ArrayList<>(prefix);
      path.add(e.getKey());
      String relative = ConfigUtil.joinPath(path);
      String full = ROOT + "." + relative;
      if (RULES.containsKey(relative)) {
        continue;
      }
      if (SECTIONS.contains(relative)) {
        if (e.getValue().valueType() == ConfigValueType.OBJECT) {
          walk((ConfigObject) e.getValue(), path, check, unknown, warnings);
        } else {
          check.error(full, e.getValue(), "a section with the keys " + String.join(", ",
              childrenOf(relative)));
        }
        continue;
      }
      unknown.add(full);
      String suggestion = suggest(e.getKey(), prefix.isEmpty() ? "" : ConfigUtil.joinPath(prefix));
      warnings.add(full + ": unknown key, ignored"
          + (suggestion == null ? "" : " (did you mean " + suggestion + "?)"));
    }
  }

  /** The known child names of a section ("" for the root). */
  private static List<String> childrenOf(String section) {
    String prefix = section.isEmpty() ? "" : section + ".";
    Set<String> names = new LinkedHashSet<>();
    for (String key : RULES.keySet()) {
      if (key.startsWith(prefix)) {
        names.add(key.substring(prefix.length()).split("\\.")[0]);
      }
    }
    return new ArrayList<>(names);
  }

  private static String suggest(String name, String section) {
    String normalised = AgentScopeConfigLoader.kebabCase(name);
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String candidate : childrenOf(section)) {
      int d = distance(normalised, candidate);
      if (d < bestDistance) {
        bestDistance = d;
        best = candidate;
      }
    }
    int limit = Math.max(2, normalised.length() / 3);
    return best != null && bestDistance <= limit ? best : null;
  }

  private static int distance(String a, String b) {
    int[] prev = new int[b.length() + 1];
    int[] cur = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      prev[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      cur[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
        cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
      }
      int[] t = prev;
      prev = cur;
      cur = t;
    }
    return prev[b.length()];
  }

  // ---------------------------------------------------------------------------------------------
  // Checks across keys

  private static void crossChecks(Check c) {
    Map<String, Object> t = c.typed;
    String url = (String) t.get("db.url");
    if ("postgres".equals(t.get("persistence")) && url != null
        && !url.startsWith("jdbc:postgresql:")) {
      c.error(ROOT + ".db.url", c.valueAt(ROOT + ".db.url"), url.isEmpty()
          ? "set when persistence = postgres (or set OTL_DB_URL), e.g. jdbc:postgresql://host:5432/otl"
          : "a jdbc:postgresql: URL when persistence = postgres");
    }
    if ("h2".equals(t.get("persistence")) && url != null && !url.isEmpty()
        && !url.startsWith("jdbc:h2:")) {
      c.error(ROOT + ".db.url", c.valueAt(ROOT + ".db.url"),
          "empty or a jdbc:h2: URL when persistence = h2");
    }

    @SuppressWarnings("unchecked")
    List<String> triggers = (List<String>) t.get("training-runner.trigger.type");
    String cron = (String) t.get("training-runner.trigger.cron");
    if (triggers != null && triggers.contains("scheduled") && cron != null && cron.isBlank()) {
      String key = ROOT + ".training-runner.trigger.cron";
      c.error(key, c.valueAt(key), "a 6-field cron expression such as \"0 0 2 * * ?\" when "
          + "trigger.type includes scheduled");
    }

    @SuppressWarnings("unchecked")
    List<Double> steps = (List<Double>) t.get("model-update.steps");
    Double canary = (Double) t.get("model-update.canary-ratio");
    if (steps != null && canary != null && !steps.isEmpty() && steps.get(0) <= canary) {
      String key = ROOT + ".model-update.steps";
      c.error(key, c.valueAt(key), "ratios above model-update.canary-ratio ("
          + format(canary) + "), since they follow the canary stage");
    }

    String storePath = (String) t.get("data-collector.store-path");
    if ("local".equals(t.get("data-collector.store-type")) && storePath != null && storePath.isBlank()) {
      String key = ROOT + ".data-collector.store-path";
      c.error(key, c.valueAt(key), "a folder (e.g. ./trajectories) when store-type = local");
    }

    Duration min = (Duration) t.get("training-runner.submit-retry.min-backoff");
    Duration max = (Duration) t.get("training-runner.submit-retry.max-backoff");
    if (min != null && max != null && max.compareTo(min) < 0) {
      String key = ROOT + ".training-runner.submit-retry.max-backoff";
      c.error(key, c.valueAt(key), "a duration >= submit-retry.min-backoff");
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Rules

  /** Checks one value; returns it typed, or null after recording an error. */
  @FunctionalInterface
  private interface Rule {
    Object check(Check c, String key, ConfigValue value);
  }

  private static void rule(String key, Rule rule) {
    RULES.put(key, rule);
    String[] parts = key.split("\\.");
    StringBuilder prefix = new StringBuilder();
    for (int i = 0; i < parts.length - 1; i++) {
      if (i > 0) {
        prefix.append('.');
      }
      prefix.append(parts[i]);
      SECTIONS.add(prefix.toString());
    }
  }

  /**
   * database | local. AgentScope's {@code oss} is refused, not ignored: this node has no OSS client
   * and the AgentScope files carry no OSS credentials, so accepting it would silently store nothing
   * where the user looks for trajectories.
   */
  private static Rule storeType() {
    return (c, key, v) -> {
      String s = asScalarString(v);
      if ("oss".equals(s)) {
        c.error(key, v, "database (the journal) or local (JSON lines under store-path); oss is not"
            + " supported by this node (no OSS client, no OSS credentials in the file)");
        return null;
      }
      if (!"database".equals(s) && !"local".equals(s)) {
        c.error(key, v, "one of database, local");
        return null;
      }
      return s;
    };
  }

  /** store-endpoint and store-bucket only mean something for store-type = oss, which is refused. */
  private static Rule onlyForOss() {
    return (c, key, v) -> {
      String s = asScalarString(v);
      if (s == null || !s.isBlank()) {
        c.error(key, v, "empty: only store-type = oss uses it, and this node does not support oss");
        return null;
      }
      return s;
    };
  }

  private static Rule anySection() {
    return (c, key, v) -> {
      if (v.valueType() != ConfigValueType.OBJECT) {
        c.error(key, v, "a section of key = value settings");
        return null;
      }
      return v.unwrapped();
    };
  }

  private static Rule zone() {
    return (c, key, v) -> {
      Object s = v.unwrapped();
      if (s instanceof String id) {
        try {
          return java.time.ZoneId.of(id);
        } catch (java.time.DateTimeException e) {
          // fall through to the error
        }
      }
      c.error(key, v, "a time zone id such as UTC, Europe/Paris or Asia/Shanghai");
      return null;
    };
  }

  private static Rule bool() {
    return (c, key, v) -> {
      Boolean b = asBoolean(v);
      if (b == null) {
        c.error(key, v, "true or false");
      }
      return b;
    };
  }

  private static Rule oneOf(String... allowed) {
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

  private static Rule string(boolean nonEmpty) {
    return (c, key, v) -> {
      String s = asScalarString(v);
      if (s == null || nonEmpty && s.isBlank()) {
        c.error(key, v, nonEmpty ? "a non-empty string" : "a string");
        return null;
      }
      return s;
    };
  }

  /** A number within optional bounds; null bounds are open-ended. */
  private static Rule number(Double min, boolean minInclusive, Double max, boolean maxInclusive) {
    String requirement;
    if (min != null && max != null) {
      requirement = "a number in " + (minInclusive ? "[" : "(") + format(min) + ", "
          + format(max) + (maxInclusive ? "]" : ")");
    } else if (min != null) {
      requirement = "a number " + (minInclusive ? ">= " : "> ") + format(min);
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

  private static Rule integerAtLeast(int min) {
    return (c, key, v) -> {
      Double d = asNumber(v);
      if (d == null || d != Math.rint(d) || d < min || d > Integer.MAX_VALUE) {
        c.error(key, v, "an integer >= " + min);
        return null;
      }
      return d.intValue();
    };
  }

  private static Rule integerBetween(int min, int max) {
    return (c, key, v) -> {
      Double d = asNumber(v);
      if (d == null || d != Math.rint(d) || d < min || d > max) {
        c.error(key, v, "an integer from " + min + " to " + max);
        return null;
      }
      return d.intValue();
    };
  }

  private static Rule duration(boolean zeroAllowed) {
    String requirement = "a duration " + (zeroAllowed ? ">= 0" : "> 0") + DURATION_EXAMPLES;
    return (c, key, v) -> {
      Duration d;
      try {
        d = c.config.getDuration(key);
      } catch (ConfigException e) {
        c.error(key, v, requirement);
        return null;
      }
      if (d.isNegative() || !zeroAllowed && d.isZero()) {
        c.error(key, v, requirement);
        return null;
      }
      return d;
    };
  }

  private static Rule listOf(String... allowed) {
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

  private static Rule regexList() {
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

  private static Rule httpUrl() {
    String requirement = "an http:// or https:// URL with a host, e.g. http://127.0.0.1:8265";
    return (c, key, v) -> {
      String s = asScalarString(v);
      if (s == null) {
        c.error(key, v, requirement);
        return null;
      }
      try {
        URI uri = new URI(s.trim());
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if ((scheme.equals("http") || scheme.equals("https")) && uri.getHost() != null) {
          return uri;
        }
        c.error(key, v, requirement);
      } catch (URISyntaxException e) {
        c.error(key, v, requirement + " (" + e.getReason() + " at index " + e.getIndex() + ")");
      }
      return null;
    };
  }

  private static Rule triggerTypes() {
    String requirement = "one or more of " + String.join(", ", TRIGGERS)
        + " (a string, a list, or a comma-separated string)";
    return (c, key, v) -> {
      List<String> raw = new ArrayList<>();
      if (v.valueType() == ConfigValueType.STRING) {
        raw.addAll(List.of(((String) v.unwrapped()).split(",")));
      } else {
        List<ConfigValue> list = c.listOrNull(key, v);
        if (list == null) {
          c.error(key, v, requirement);
          return null;
        }
        for (ConfigValue element : list) {
          String s = asScalarString(element);
          if (s == null) {
            c.error(key, v, requirement);
            return null;
          }
          raw.addAll(List.of(s.split(",")));
        }
      }
      List<String> types = new ArrayList<>();
      for (String r : raw) {
        String type = r.trim();
        if (type.isEmpty()) {
          continue;
        }
        if (!TRIGGERS.contains(type)) {
          c.error(key, v, requirement + "; \"" + type + "\" is not one");
          return null;
        }
        if (!types.contains(type)) {
          types.add(type);
        }
      }
      if (types.isEmpty()) {
        c.error(key, v, requirement);
        return null;
      }
      return types;
    };
  }

  /** Which Trinity bench metric scores which evaluation metric (BenchScores), checked as a job would. */
  private static Rule benchMetrics() {
    return (c, key, v) -> {
      String s = asScalarString(v);
      try {
        if (s == null) throw new IllegalArgumentException("not a string");
        io.otl.node.trinity.BenchScores.mapping(Map.of(io.otl.node.trinity.BenchScores.HYPERPARAM, s));
        return s;
      } catch (IllegalArgumentException e) {
        c.error(key, v, "a comma-separated list of <evaluation metric>=<Trinity bench metric>, e.g. \""
            + io.otl.node.trinity.BenchScores.DEFAULT_MAPPING + "\"");
        return null;
      }
    };
  }

  private static Rule cron() {
    return (c, key, v) -> {
      if (v.valueType() != ConfigValueType.STRING) {
        c.error(key, v, "a 6-field cron expression (seconds first) such as \"0 0 2 * * ?\"");
        return null;
      }
      String s = (String) v.unwrapped();
      if (s.isBlank()) {
        return s; // allowed unless trigger.type includes scheduled (cross-check)
      }
      CronSchedule schedule;
      try {
        schedule = CronSchedule.parse(s);
      } catch (IllegalArgumentException e) {
        c.error(key, v, "a 6-field cron expression (seconds minutes hours day-of-month month "
            + "day-of-week) such as \"0 0 2 * * ?\"; " + e.getMessage());
        return null;
      }
      if (schedule.nextAfter(ZonedDateTime.now(ZoneOffset.UTC)).isEmpty()) {
        c.error(key, v, "a cron expression that fires; this one never matches a date");
        return null;
      }
      return s;
    };
  }

  private static Rule steps() {
    String requirement = "a list of numbers in (0, 1], increasing, ending at 1.0";
    return (c, key, v) -> {
      List<ConfigValue> list = c.list(key, v, requirement);
      if (list == null) {
        return null;
      }
      List<Double> out = new ArrayList<>();
      for (int i = 0; i < list.size(); i++) {
        Double d = asNumber(list.get(i));
        if (d == null || d <= 0 || d > 1) {
          c.error(key + "[" + i + "]", list.get(i), "a number in (0, 1]");
          return null;
        }
        out.add(d);
      }
      for (int i = 1; i < out.size(); i++) {
        if (out.get(i) <= out.get(i - 1)) {
          c.error(key, v, requirement + " (not increasing at index " + i + ")");
          return null;
        }
      }
      if (out.isEmpty() || out.get(out.size() - 1) != 1.0) {
        c.error(key, v, requirement);
        return null;
      }
      return out;
    };
  }

  // ---------------------------------------------------------------------------------------------
  // Value conversion, with the same leniency as Typesafe Config's getters (so -D overrides, which
  // are always strings, work), but without silent truncation.

  private static Double asNumber(ConfigValue v) {
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
  private static String asScalarString(ConfigValue v) {
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

  private static String format(double d) {
    return BigDecimal.valueOf(d).stripTrailingZeros().toPlainString();
  }

  /** Renders a value for a message; secrets are masked, long values shortened. */
  static String render(String key, ConfigValue v) {
    if (Secrets.isSecretKey(key)) {
      return Secrets.MASK;
    }
    String text = v.render(ConfigRenderOptions.concise()); // strings quoted, as JSON
    return text.length() > 200 ? text.substring(0, 200) + "…" : text;
  }

  /** The errors of one validation and the typed values that passed, for the cross-checks. */
  private static final class Check {
    final Config config;
    final List<String> errors = new ArrayList<>();
    final Map<String, Object> typed = new HashMap<>();

    Check(Config config) {
      this.config = config;
    }

    void error(String key, ConfigValue v, String requirement) {
      String origin = v.origin() == null ? "" : v.origin().description();
      String from = origin.startsWith("environment variable") || origin.startsWith("system prop")
          ? " (from " + origin + ")" : "";
      errors.add(key + " = " + render(key, v) + from + ": must be " + requirement);
    }

    ConfigValue valueAt(String key) {
      return config.getValue(key);
    }

    /** The list at key (lists, or objects with numeric keys from -D), or an error. */
    List<ConfigValue> list(String key, ConfigValue v, String requirement) {
      List<ConfigValue> list = listOrNull(key, v);
      if (list == null) {
        error(key, v, requirement);
      }
      return list;
    }

    List<ConfigValue> listOrNull(String key, ConfigValue v) {
      if (v.valueType() == ConfigValueType.LIST) {
        return (ConfigList) v;
      }
      if (v.valueType() == ConfigValueType.OBJECT) {
        try {
          return config.getList(key);
        } catch (ConfigException e) {
          return null;
        }
      }
      return null;
    }
  }
}
