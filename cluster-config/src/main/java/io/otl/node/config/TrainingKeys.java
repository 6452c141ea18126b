package io.otl.node.config;

import static io.otl.node.config.ConfigRules.anySection;
import static io.otl.node.config.ConfigRules.bearerSecret;
import static io.otl.node.config.ConfigRules.bool;
import static io.otl.node.config.ConfigRules.duration;
import static io.otl.node.config.ConfigRules.headerSecret;
import static io.otl.node.config.ConfigRules.integerAtLeast;
import static io.otl.node.config.ConfigRules.integerBetween;
import static io.otl.node.config.ConfigRules.listOf;
import static io.otl.node.config.ConfigRules.name;
import static io.otl.node.config.ConfigRules.number;
import static io.otl.node.config.ConfigRules.oneOf;
import static io.otl.node.config.ConfigRules.regexList;
import static io.otl.node.config.ConfigRules.string;
import static io.otl.node.config.TrainingRules.benchMetrics;
import static io.otl.node.config.TrainingRules.cron;
import static io.otl.node.config.TrainingRules.emptyOrHttpUrl;
import static io.otl.node.config.TrainingRules.ossOnly;
import static io.otl.node.config.TrainingRules.steps;
import static io.otl.node.config.TrainingRules.storeType;
import static io.otl.node.config.TrainingRules.triggerTypes;
import static io.otl.node.config.TrainingRules.withoutCredentials;
import static io.otl.node.config.TrainingRules.zone;

import io.otl.node.config.ConfigRules.Rule;
import io.otl.node.trinity.Hyperparameters;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Every documented key under {@code agentscope.training} and the rule its value must pass: the one
 * table to edit when a module adds a setting. Its order is the order problems are reported in.
 */
final class TrainingKeys {

  /** The section whose unknown keys are errors, not warnings (relative to {@link TrainingSettingsValidator#ROOT}). */
  static final String HYPERPARAMS_SECTION = "training-runner.hyperparams";
  private static final String HYPERPARAMS = "hyperparams";

  /** Rules by key relative to {@link TrainingSettingsValidator#ROOT}, in report order. */
  static final Map<String, Rule> RULES = new LinkedHashMap<>();
  /** Every proper prefix of a rule key: the sections. */
  static final Set<String> SECTIONS = new HashSet<>();

  static {
    rule("enabled", bool());
    rule("persistence", oneOf("h2", "postgres"));
    rule("db.url", string(false));
    rule("db.user", string(false));
    rule("db.password", string(false));
    rule("db.max-connections", integerAtLeast(1));
    rule("http.enabled", bool());
    rule("http.host", string(true));
    rule("http.port", integerBetween(0, 65535));
    rule("http.ask-timeout", duration(false));
    rule("http.shutdown-deadline", duration(true));
    rule("http.stop-drain", duration(true));
    rule("http.max-in-flight", integerAtLeast(1));
    rule("http.max-connections-per-address", integerAtLeast(0));
    rule("http.metrics-sample-interval", duration(false));
    rule("auth.token", bearerSecret());
    rule("auth.protect-reads", bool());
    rule("auth.metrics-token", bearerSecret());
    // operators.<name> = <token>: keyed by operator name, each name and token checked by the rule.
    rule(OperatorTokens.KEY, OperatorTokens.rule());
    rule("http.metrics-top-agents", integerAtLeast(1));
    rule("http.max-json-depth", integerBetween(2, 1000));
    rule("otlp.port", integerBetween(-1, 65535));
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
    rule(k + "group-instance-id", TrainingRules.kafkaGroupInstanceId());
    rule(k + "session-timeout", duration(false));
    for (String topic : List.of("agent-events", "trajectories", "model-updates")) {
      rule(k + "topics." + topic, string(true));
    }
    // Empty: the input topic's name plus ".dlq" (KafkaSettings).
    rule(k + "topics.dead-letter", string(false));
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
    rule("cluster.new-member-grace", duration(true));
    rule("serving.backend", oneOf("auto", "static", "vllm-lora"));
    rule("serving.static.served-model", name(false));
    rule("serving.vllm.url", withoutCredentials(emptyOrHttpUrl("the simulator in this node"),
        "agentscope.training.serving.vllm.api-key"));
    rule("serving.vllm.api-key", headerSecret());
    rule("serving.vllm.request-timeout", duration(false));
    rule("serving.retry.min-backoff", duration(false));
    rule("serving.retry.max-backoff", duration(false));
    rule("serving.retry.max-attempts", integerAtLeast(1));
    rule("simulator.enabled", bool());
    rule("simulator.host", string(true));
    rule("simulator.port", integerBetween(0, 65535));
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
    rule(gw + "upstream-api-key", headerSecret());
    rule(gw + "default-agent", string(false));
    rule(gw + "timeout", duration(false));
    rule(gw + "max-body-bytes", integerAtLeast(1));
    rule(gw + "max-in-flight", integerAtLeast(1));
    rule(gw + "max-recordings-pending", integerAtLeast(1));
    rule(gw + "fallback-to-stable", bool());
    rule(gw + "capture-tokens", bool());

    String dc = "data-collector.";
    rule(dc + "collect-mode", oneOf("full", "sampled"));
    rule(dc + "sample-rate", number(0.0, true, 1.0, true));
    rule(dc + "store-type", storeType());
    rule(dc + "store-path", string(false));
    rule(dc + "store-endpoint", ossOnly());
    rule(dc + "store-bucket", ossOnly());
    rule(dc + "max-text-length", integerAtLeast(1));
    rule(dc + "max-events-per-request", integerAtLeast(1));
    rule(dc + "desensitize.enabled", bool());
    rule(dc + "desensitize.patterns", TrainingRules.desensitizePatterns());
    rule(dc + "desensitize.custom", regexList());
    rule(dc + "session.idle-timeout", duration(false));
    rule(dc + "session.feedback-window", duration(true, ConfigRules.LONGEST_SPAN));
    rule(dc + "session.passivate-after", duration(false));
    for (String weight : List.of("thumbs-up", "thumbs-down", "rating", "adopted",
        "repeated-question", "human-handoff", "success", "failure", "timeout")) {
      rule(dc + "reward.weights." + weight, number(null, false, null, false));
    }

    String tr = "training-runner.";
    rule(tr + "trinity-endpoint", TrainingRules.trinityEndpoint());
    rule(tr + "backend", oneOf("ray-jobs", "trinity-proxy"));
    rule(tr + "trigger.type", triggerTypes());
    rule(tr + "trigger.cron", cron());
    rule(tr + "trigger.min-samples", integerAtLeast(1));
    rule(tr + "trigger.missed-slots", oneOf("fire", "skip"));
    rule(tr + "trigger.zone", zone());
    rule(tr + "algorithm", oneOf("sft", "ppo", "grpo", "dpo", "distillation"));
    rule(tr + "base-model", name(true));
    // Only the names a job's renderer reads: any other is refused (UnknownKeys), never ignored.
    Hyperparameters.KNOWN.forEach((name, kind) -> rule(tr + HYPERPARAMS + "." + name, switch (kind) {
      case POSITIVE_NUMBER -> number(0.0, false, null, false);
      case NON_NEGATIVE_NUMBER -> number(0.0, true, null, false);
      case FRACTION -> number(0.0, true, 1.0, true);
      case POSITIVE_INTEGER -> integerAtLeast(1);
      case NAME -> name(true);
      case OPTIONAL_NAME -> name(false);
      case BENCH_METRICS -> benchMetrics();
    }));
    rule(tr + "min-quality", number(0.0, true, 1.0, true));
    // rewards are clipped to [-1, 1] (TrainingPolicy.REWARD_RANGE): above, a filter selects nothing
    rule(tr + "sft-min-reward", number(null, true, 1.0, true));
    rule(tr + "dpo-min-margin", number(0.0, false, 2.0, true));
    rule(tr + "start-from", oneOf("stable", "base"));
    rule(tr + "replay-fraction", number(0.0, true, 1.0, false));
    rule(tr + "data-half-life", duration(false, ConfigRules.LONGEST_SPAN));
    rule(tr + "eval-fraction", number(0.0, true, 1.0, false));
    rule(tr + "dataset-dir", string(false));
    rule(tr + "checkpoint-root-dir", string(false));
    rule(tr + "poll-interval", duration(false));
    rule(tr + "trinity.request-timeout", duration(false));
    rule(tr + "trinity.auth-token", headerSecret());
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
    rule(mu + "retain-previous", duration(false, ConfigRules.LONGEST_SPAN));
    rule(mu + "offline-gate-tolerance", number(0.0, true, null, false));
  }

  private TrainingKeys() {}

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

  /** The known child names of a section ("" for the root). */
  static List<String> childrenOf(String section) {
    String prefix = section.isEmpty() ? "" : section + ".";
    Set<String> names = new LinkedHashSet<>();
    for (String key : RULES.keySet()) {
      if (key.startsWith(prefix)) {
        names.add(key.substring(prefix.length()).split("\\.")[0]);
      }
    }
    return new ArrayList<>(names);
  }
}
