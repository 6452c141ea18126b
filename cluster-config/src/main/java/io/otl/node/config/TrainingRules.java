package io.otl.node.config;

import static io.otl.node.config.ConfigRules.asNumber;
import static io.otl.node.config.ConfigRules.asScalarString;

import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;
import io.otl.core.schedule.CronSchedule;
import io.otl.node.config.ConfigRules.Rule;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Rules that each serve one or two training keys (store type, trigger types, cron, rollout steps,
 * Trinity URL and bench metrics): their messages name this node's choices, so they sit apart from
 * the generic rules in {@link ConfigRules}.
 */
final class TrainingRules {

  private static final List<String> TRIGGERS = List.of("threshold", "scheduled", "manual");

  private TrainingRules() {}

  /**
   * database | local, and AgentScope's {@code oss}, accepted so that AgentScope's own application.yml
   * loads unchanged (design §8) but never silently: this node has no OSS client and the file carries
   * no OSS credentials, so trajectories stay in the journal (as with database) and start-up says so.
   */
  static Rule storeType() {
    return (c, key, v) -> {
      String s = asScalarString(v);
      if ("oss".equals(s)) {
        c.warn(key, v, "this node has no OSS client (and the file no OSS credentials): completed trajectories"
            + " stay in the journal, as with database, and are read through the API and export; set database"
            + " or local to silence this");
        return s;
      }
      if (!"database".equals(s) && !"local".equals(s)) {
        c.error(key, v, "one of database, local (or oss, kept in the journal)");
        return null;
      }
      return s;
    };
  }

  /**
   * The built-in pattern names; a list that leaves some out is honoured, but said at start-up: design §8's
   * {@code [phone, id_card, email]}, which AgentScope's samples copy, stores card numbers, IBANs and API keys
   * raw in the journal, the trajectories topic and the local store, and nothing told the user (trial t5).
   */
  static Rule desensitizePatterns() {
    Rule names = ConfigRules.listOf(io.otl.core.session.Desensitizer.BUILT_IN.toArray(String[]::new));
    return (c, key, v) -> {
      Object out = names.check(c, key, v);
      if (out instanceof List<?> listed) {
        List<String> left = new ArrayList<>(io.otl.core.session.Desensitizer.BUILT_IN);
        left.removeAll(listed);
        ConfigValue enabled = c.valueAt(key.substring(0, key.length() - "patterns".length()) + "enabled");
        if (!left.isEmpty() && !"false".equals(String.valueOf(enabled.unwrapped()))) {
          c.warn(key, v, "leaves out " + String.join(", ", left) + ": what they match is stored as sent (the"
              + " export's final PII scan still refuses it); list all six, or leave the key unset, to replace it");
        }
      }
      return out;
    };
  }

  /**
   * {@code kafka.group-instance-id}: empty (derived from the cluster address) or what Kafka takes as a
   * static member id. KafkaSettings checks it too, but only after validation and without the variable:
   * {@code OTL_KAFKA_GROUP_INSTANCE_ID="a b"} was refused naming the key alone (trial t61).
   */
  static Rule kafkaGroupInstanceId() {
    return (c, key, v) -> {
      String s = asScalarString(v);
      if (s == null || !s.trim().isEmpty() && !s.trim().matches(io.otl.persistence.kafka.KafkaSettings.GROUP_INSTANCE_ID)) {
        c.error(key, v, "empty (derived from the cluster address) or 1-249 characters of [A-Za-z0-9._:-], unique per node");
        return null;
      }
      return s;
    };
  }

  /** store-endpoint and store-bucket only mean something to an OSS store, which this node does not write. */
  static Rule ossOnly() {
    return (c, key, v) -> {
      String s = asScalarString(v);
      if (s == null) {
        c.error(key, v, "a string (an OSS endpoint or bucket; not used by this node)");
        return null;
      }
      if (!s.isBlank()) c.warn(key, v, "not used: this node writes no OSS store");
      return s;
    };
  }

  static Rule zone() {
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

  /**
   * {@code inner}, and no user-info part ({@code http://user:key@host}): the URL is logged and
   * journaled as v0's endpoint, and the client does not send it. The value is not shown.
   */
  static Rule withoutCredentials(Rule inner, String keyInstead) {
    return (c, key, v) -> {
      Object s = inner.check(c, key, v);
      if (s instanceof String url && io.otl.http.gateway.ServingUrls.hasCredentials(url)) {
        c.errors.add(key + ": must not carry credentials (user:password@…), which are not sent and would be logged"
            + " and stored as the base model's endpoint; give the key as " + keyInstead);
        return null;
      }
      if (s instanceof String url && io.otl.http.gateway.ServingUrls.hasQueryOrFragment(url)) {
        // The client appends its paths to the URL: a query would swallow them (and is often a key).
        c.errors.add(key + ": must not have a query or fragment (?…, #…), which the paths appended to it would"
            + " follow; give a key as " + keyInstead);
        return null;
      }
      return s;
    };
  }

  /**
   * Empty, or an http(s) URL with a host, as written ({@code serving.vllm.url}: empty means the simulator
   * in this node). {@code ftp://x} or {@code notaurl} started the node, whose adapter loads and routed calls
   * then all failed (trial t59).
   */
  static Rule emptyOrHttpUrl(String whenEmpty) {
    String requirement = "empty (" + whenEmpty + ") or an http:// or https:// URL with a host, e.g. http://127.0.0.1:8000";
    return (c, key, v) -> {
      String s = asScalarString(v);
      if (s != null && s.isEmpty()) return s;
      SettingsCheck quiet = new SettingsCheck(c.config);
      if (s == null || httpUrl().check(quiet, key, v) == null) {
        c.error(key, v, requirement);
        return null;
      }
      return s;
    };
  }

  /**
   * {@code trinity-endpoint}: an http(s) URL, except the default the node derives from the simulator's
   * host and port when that port is itself wrong. {@code OTL_SIMULATOR_PORT=-1} was reported twice, the
   * second time as {@code trinity-endpoint = "http://127.0.0.1:-1"}, a key and value the operator never
   * wrote (trial t59); the simulator port's own error says what to fix.
   */
  static Rule trinityEndpoint() {
    Rule url = httpUrl();
    return (c, key, v) -> {
      String s = asScalarString(v);
      String host = "agentscope.training.simulator.host";
      String port = "agentscope.training.simulator.port";
      if (s != null && c.config.hasPath(host) && c.config.hasPath(port)) {
        String derived = "http://" + asScalarString(c.config.getValue(host)) + ":" + asScalarString(c.config.getValue(port));
        if (s.equals(derived) && !validPort(asScalarString(c.config.getValue(port)))) return null;
      }
      return url.check(c, key, v);
    };
  }

  private static boolean validPort(String port) {
    try {
      int p = Integer.parseInt(port);
      return p >= 0 && p <= 65535;
    } catch (NumberFormatException | NullPointerException e) {
      return false;
    }
  }

  static Rule httpUrl() {
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

  static Rule triggerTypes() {
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
  static Rule benchMetrics() {
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

  static Rule cron() {
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
      dayNumbers(schedule).ifPresent(w -> c.warn(key, v, w));
      return s;
    };
  }

  /** Quartz's numbering, which Spring users (AgentScope Java's cron) read one day off: 1-5 is SUN-THU here. */
  static java.util.Optional<String> dayNumbers(CronSchedule schedule) {
    return schedule.daysOfWeekGivenByNumber().map(days -> "fires on " + days
        + ": day-of-week numbers count as in Quartz, 1 = SUN … 7 = SAT (Spring's @Scheduled counts 1 = MON …"
        + " 7 = SUN); write the days as names (MON-FRI) to say which are meant");
  }

  static Rule steps() {
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
}
