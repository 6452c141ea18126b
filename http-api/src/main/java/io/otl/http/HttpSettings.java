package io.otl.http;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The HTTP edge's settings ({@code agentscope.training.http}, {@code auth}, {@code otlp}, and the
 * request limit {@code data-collector.max-events-per-request}), read once at start-up. Defaults and
 * a comment per key live in the node's reference.conf; values were checked by the node's validator
 * before this is read.
 *
 * @param askTimeout how long a route waits for an entity's answer
 * @param stopDrain how long a stopping node answers 503 before its port closes
 * @param maxEventsPerRequest events one ingest request (JSON or OTLP) may carry
 * @param maxConnectionsPerAddress connections one client address may hold open per listener (0: no cap)
 */
public record HttpSettings(
    boolean enabled,
    String host,
    int port,
    Duration askTimeout,
    Duration shutdownDeadline,
    Duration stopDrain,
    int maxInFlight,
    int maxConnectionsPerAddress,
    int maxJsonDepth,
    Duration metricsSampleInterval,
    int metricsTopAgents,
    int maxEventsPerRequest,
    AuthSettings auth,
    OtlpSettings otlp) {

  /**
   * Bearer tokens (design §7.1); secrets, so {@link #toString()} never prints them.
   *
   * @param token empty: the API is open
   * @param metricsToken empty: {@code /metrics} is protected like other reads
   * @param operators operator name → that operator's own token ({@code auth.operators}; unique,
   *     non-empty and well named, as the node's validator checked): a request with one is recorded as
   *     by {@code token:<name>}
   */
  public record AuthSettings(String token, boolean protectReads, String metricsToken, Map<String, String> operators) {
    public AuthSettings {
      operators = Collections.unmodifiableMap(new LinkedHashMap<>(operators));
    }

    public AuthSettings(String token, boolean protectReads, String metricsToken) {
      this(token, protectReads, metricsToken, Map.of());
    }

    /** @param gatewayKeys the agents' gateway keys, which pass no API route but are named in its 401 */
    public Auth auth(java.util.Collection<String> gatewayKeys) {
      return new Auth(Optional.of(token), protectReads, Optional.of(metricsToken), operators, gatewayKeys);
    }

    /**
     * The token a command ({@code export}, {@code audit}) sends to the node that holds the journal:
     * {@code auth.token}, else the one operator token its configuration resolves (the file's
     * {@code alice = ${?ALICE_TOKEN}} with the user's own variable set), else none. A node with named
     * tokens only was answered with no token at all, and the advice to set {@code OTL_AUTH_TOKEN}
     * beside that {@code --config} then stopped the command: an operator's token equal to
     * {@code auth.token} is refused (trial t34). Several resolved: none, since which one is the user's?
     */
    public Optional<String> commandToken() {
      if (!token.isEmpty()) return Optional.of(token);
      return operators.size() == 1 ? operators.values().stream().findFirst() : Optional.empty();
    }

    @Override
    public String toString() {
      return "AuthSettings[token=" + (token.isEmpty() ? "none" : "***") + ", protectReads=" + protectReads
          + ", metricsToken=" + (metricsToken.isEmpty() ? "none" : "***") + ", operators=" + operators.keySet() + "]";
    }
  }

  /** {@code auth.operators}: name → token, in the file's order; absent (a module's own tests): none. */
  public static Map<String, String> operators(Config auth) {
    Map<String, String> named = new LinkedHashMap<>();
    if (!auth.hasPath("operators")) return named;
    Config section = auth.getConfig("operators");
    for (String name : auth.getObject("operators").keySet()) named.put(name, section.getString("\"" + name + "\""));
    return named;
  }

  /** @param port the separate OTLP/HTTP listener's port; negative: none (OTLP on the API's port only) */
  public record OtlpSettings(int port, long maxDecodedBytes) {
    public boolean ownPort() {
      return port >= 0;
    }
  }

  /** Reads the edge's keys under {@code agentscope.training}. */
  public static HttpSettings fromConfig(Config training) {
    Config h = training.getConfig("http");
    Config a = training.getConfig("auth");
    Config o = training.getConfig("otlp");
    return new HttpSettings(h.getBoolean("enabled"), h.getString("host"), h.getInt("port"),
        h.getDuration("ask-timeout"), h.getDuration("shutdown-deadline"), h.getDuration("stop-drain"),
        h.getInt("max-in-flight"), h.getInt("max-connections-per-address"), h.getInt("max-json-depth"), h.getDuration("metrics-sample-interval"),
        h.getInt("metrics-top-agents"), training.getInt("data-collector.max-events-per-request"),
        new AuthSettings(a.getString("token"), a.getBoolean("protect-reads"), a.getString("metrics-token"),
            operators(a)),
        new OtlpSettings(o.getInt("port"), o.getLong("max-decoded-bytes")));
  }
}
