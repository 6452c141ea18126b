package io.otl.node.config;

import com.typesafe.config.ConfigValue;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Which {@code OTL_*} variable set a key, so that a refused value names what the operator typed.
 * Typesafe Config gives every value taken from {@code key = ${?VARIABLE}} in a {@code .conf} file the
 * same origin, "env variables", without the variable's name: {@code OTL_CLUSTER_PORT=abc} was
 * refused as "env variables: port has type STRING" and {@code OTL_SIMULATOR_ENABLED=maybe} named
 * only the key. {@code EnvironmentVariablesTest} checks this table against the files.
 */
final class EnvironmentVariables {
  private EnvironmentVariables() {}

  /** The origin Typesafe Config gives a value substituted from the environment. */
  static final String SUBSTITUTED = "env variables";

  /** Full key → the variable that {@code reference.conf} or {@code otl-node.conf} substitutes into it. */
  static final Map<String, String> BY_KEY;

  static {
    Map<String, String> m = new LinkedHashMap<>();
    String t = TrainingSettingsValidator.ROOT + ".";
    m.put(t + "http.host", "OTL_HTTP_HOST");
    m.put(t + "http.port", "OTL_HTTP_PORT");
    m.put(t + "otlp.port", "OTL_OTLP_PORT");
    m.put(t + "auth.token", "OTL_AUTH_TOKEN");
    m.put(t + "auth.metrics-token", "OTL_METRICS_TOKEN");
    m.put(t + "simulator.enabled", "OTL_SIMULATOR_ENABLED");
    m.put(t + "simulator.port", "OTL_SIMULATOR_PORT");
    m.put(t + "cluster.bootstrap", "OTL_CLUSTER_BOOTSTRAP");
    m.put(t + "cluster.lease-window", "OTL_CLUSTER_LEASE_WINDOW");
    m.put(t + "training-runner.trinity-endpoint", "OTL_TRINITY_ENDPOINT");
    m.put(t + "training-runner.trinity.auth-token", "OTL_TRINITY_TOKEN");
    m.put(t + "gateway.enabled", "OTL_GATEWAY_ENABLED");
    m.put(t + "gateway.upstream-api-key", "OTL_GATEWAY_UPSTREAM_API_KEY");
    m.put(t + "serving.backend", "OTL_SERVING_BACKEND");
    m.put(t + "serving.vllm.url", "OTL_VLLM_URL");
    m.put(t + "serving.vllm.api-key", "OTL_VLLM_API_KEY");
    m.put(t + "kafka.enabled", "OTL_KAFKA_ENABLED");
    m.put(t + "kafka.bootstrap-servers", "OTL_KAFKA_BOOTSTRAP");
    m.put(t + "kafka.group-instance-id", "OTL_KAFKA_GROUP_INSTANCE_ID");
    m.put(ClusterAddressKeys.HOSTNAME, "OTL_HOSTNAME");
    m.put(ClusterAddressKeys.PORT, "OTL_CLUSTER_PORT");
    BY_KEY = Map.copyOf(m);
  }

  /**
   * Where {@code v} came from when that is not a file: "environment variable OTL_…" or "system
   * property …"; empty for a file or a default.
   */
  static Optional<String> source(String key, ConfigValue v) {
    String origin = v.origin() == null ? "" : v.origin().description();
    if (origin.startsWith("environment variable") || origin.startsWith("system prop")) return Optional.of(origin);
    if (origin.equals(SUBSTITUTED)) {
      return Optional.of(BY_KEY.containsKey(key) ? "environment variable " + BY_KEY.get(key) : "an environment variable");
    }
    return Optional.empty();
  }
}
