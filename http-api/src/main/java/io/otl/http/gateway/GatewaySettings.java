package io.otl.http.gateway;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigObject;
import io.otl.http.HttpSettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Settings of the inference gateway ({@code agentscope.training.gateway}, design §7.5).
 *
 * @param apiKeys agent id → the key that agent sends as {@code Authorization: Bearer …}; empty: no
 *     gateway auth, the agent is named by {@code X-Agent-Id} (or {@code defaultAgent})
 * @param upstreamKeys agent id → the key sent to that agent's model servers (falls back to
 *     {@code endpointKeys}, then {@code upstreamApiKey}); secrets, never logged or returned
 * @param endpointKeys a model server's base URL → its key: the AgentScope {@code model} section's
 *     {@code api_key} for its {@code base_url} (v0), sent to that server only; secrets
 * @param operatorTokens the node's API tokens ({@code auth.token} and each {@code auth.operators}
 *     token; empty: none). With any, the gateway is never open: a call sends an agent's key, or one of
 *     these with {@code X-Agent-Id} naming the agent (design §7.1: 401 without the bearer token when
 *     {@code auth.token} is set); secrets, never logged
 * @param timeout how long an upstream call may take (non-streaming), or stay silent (streaming)
 * @param maxInFlight calls in flight before the gateway answers 429 with Retry-After
 * @param maxRecordingsPending answered turns waiting to be recorded before the gateway answers new
 *     calls 429 with Retry-After (the recordings run after the answers, off the slots above)
 */
public record GatewaySettings(
    boolean enabled,
    Map<String, String> apiKeys,
    List<String> operatorTokens,
    Map<String, String> upstreamKeys,
    String upstreamApiKey,
    String defaultAgent,
    Duration timeout,
    long maxBodyBytes,
    int maxInFlight,
    int maxRecordingsPending,
    boolean fallbackToStable,
    boolean captureTokens,
    Map<String, String> endpointKeys,
    Map<String, ServerCalls> endpointCalls) {

  /**
   * How the gateway calls one model server: the AgentScope {@code model} section's
   * {@code timeout_seconds} and {@code max_retries} for its {@code base_url} (v0's server).
   *
   * @param timeout each attempt's limit, as {@code gateway.timeout} is for other servers
   * @param maxRetries attempts after the first when the server is unreachable, silent or answers 5xx
   */
  public record ServerCalls(Duration timeout, int maxRetries) {
    /** The longest pause before retry {@code n} (1, 2, …): 0.5 s doubling, at most 8 s (OpenAI's SDKs' schedule). */
    public static Duration backoff(int n) {
      return Duration.ofMillis(Math.min(8_000L, 500L << Math.min(n - 1, 4)));
    }

    /**
     * The pause taken before retry {@code n}: 75-100 % of {@link #backoff}, spread at random as the
     * SDKs spread theirs, so that agents failing together do not all call a recovering server again
     * in the same instant.
     */
    public static Duration jitteredBackoff(int n) {
      long max = backoff(n).toMillis();
      return Duration.ofMillis(max - java.util.concurrent.ThreadLocalRandom.current().nextLong(max / 4 + 1));
    }

    /** The longest a call can take: every attempt timing out, with the pauses between. */
    Duration longest() {
      Duration total = timeout.multipliedBy(maxRetries + 1L);
      for (int n = 1; n <= maxRetries; n++) total = total.plus(backoff(n));
      return total;
    }
  }

  public GatewaySettings {
    apiKeys = Map.copyOf(apiKeys);
    operatorTokens = List.copyOf(operatorTokens);
    upstreamKeys = Map.copyOf(upstreamKeys);
    endpointKeys = Map.copyOf(endpointKeys);
    endpointCalls = Map.copyOf(endpointCalls);
  }

  /** How calls to the server at {@code endpoint} are bounded and retried: its own settings, else {@code timeout} and none. */
  public ServerCalls callsTo(String endpoint) {
    return endpointCalls.getOrDefault(normalized(endpoint), new ServerCalls(timeout, 0));
  }

  /**
   * These settings, with calls to the model server at {@code endpoint} waiting {@code timeout} per
   * attempt and retried {@code maxRetries} times: the AgentScope {@code model} section's settings
   * for its base URL, which its users set for exactly these calls.
   */
  public GatewaySettings withServerCalls(String endpoint, Duration timeout, int maxRetries) {
    if (endpoint == null) return this;
    Map<String, ServerCalls> calls = new LinkedHashMap<>(endpointCalls);
    calls.put(normalized(endpoint), new ServerCalls(timeout, maxRetries));
    return new GatewaySettings(enabled, apiKeys, operatorTokens, upstreamKeys, upstreamApiKey, defaultAgent,
        this.timeout, maxBodyBytes, maxInFlight, maxRecordingsPending, fallbackToStable, captureTokens, endpointKeys, calls);
  }

  public boolean authEnabled() {
    return !apiKeys.isEmpty() || !operatorTokens.isEmpty();
  }

  /**
   * The key for a call of this agent to the model server at {@code endpoint}, or empty: the agent's
   * own upstream key, else the key configured for that server, else {@code gateway.upstream-api-key}.
   */
  public String upstreamKeyFor(String agentId, String endpoint) {
    String own = upstreamKeys.get(agentId);
    if (own != null) return own;
    return endpointKeys.getOrDefault(normalized(endpoint), upstreamApiKey);
  }

  /**
   * Where the key {@link #upstreamKeyFor} picks comes from, in the words of the configuration (never the
   * key itself): what to fix when the model server refuses it.
   */
  public String upstreamKeySource(String agentId, String endpoint) {
    if (upstreamKeys.containsKey(agentId)) return "the key of gateway.agents." + agentId + ".upstream-api-key";
    if (endpointKeys.containsKey(normalized(endpoint))) return "the key of the AgentScope model section (api_key)";
    if (upstreamApiKey != null && !upstreamApiKey.isEmpty()) return "the key of gateway.upstream-api-key";
    return "no key (set gateway.agents." + agentId + ".upstream-api-key or gateway.upstream-api-key)";
  }

  /**
   * These settings, with {@code key} sent to the model server at {@code endpoint} (and to no other):
   * the AgentScope {@code model} section's key for its base URL. An empty key changes nothing.
   */
  public GatewaySettings withEndpointKey(String endpoint, String key) {
    if (endpoint == null || key == null || key.isEmpty()) return this;
    Map<String, String> keys = new LinkedHashMap<>(endpointKeys);
    keys.put(normalized(endpoint), key);
    return new GatewaySettings(enabled, apiKeys, operatorTokens, upstreamKeys, upstreamApiKey, defaultAgent, timeout,
        maxBodyBytes, maxInFlight, maxRecordingsPending, fallbackToStable, captureTokens, keys, endpointCalls);
  }

  /** {@code http://h:9000/api/} and {@code http://h:9000/api} name one server. */
  static String normalized(String endpoint) {
    if (endpoint == null) return "";
    String e = endpoint.trim();
    while (e.endsWith("/")) e = e.substring(0, e.length() - 1);
    return e;
  }

  /** Reads {@code gateway} under {@code agentscope.training}. */
  public static GatewaySettings fromConfig(Config training) {
    Config g = training.getConfig("gateway");
    Map<String, String> keys = new LinkedHashMap<>();
    Map<String, String> upstream = new LinkedHashMap<>();
    ConfigObject agents = g.getObject("agents");
    for (String agentId : agents.keySet()) {
      String problem = io.otl.core.Ids.problem("gateway.agents." + agentId, agentId, io.otl.core.Ids.MAX_AGENT_ID);
      if (problem != null) throw new IllegalArgumentException(problem + " (the keys of gateway.agents are agent ids)");
      Config a = g.getConfig("agents").getConfig("\"" + agentId + "\"");
      if (a.hasPath("api-key") && !a.getString("api-key").isEmpty()) keys.put(agentId, a.getString("api-key"));
      if (a.hasPath("upstream-api-key") && !a.getString("upstream-api-key").isEmpty()) {
        upstream.put(agentId, a.getString("upstream-api-key"));
      }
    }
    if (new java.util.HashSet<>(keys.values()).size() < keys.size()) {
      // One key must name one agent: a shared key would let one agent write another's sessions.
      throw new IllegalArgumentException("gateway.agents: two agents have the same api-key; give each its own");
    }
    List<String> operatorTokens = new ArrayList<>();
    if (!training.getString("auth.token").isEmpty()) operatorTokens.add(training.getString("auth.token"));
    operatorTokens.addAll(HttpSettings.operators(training.getConfig("auth")).values());
    if (operatorTokens.stream().anyMatch(keys::containsValue)) {
      // The API tokens act for any agent named by X-Agent-Id; as one agent's key one would be ambiguous.
      throw new IllegalArgumentException(
          "gateway.agents: an api-key equals auth.token or an auth.operators token; give each agent its own key");
    }
    return new GatewaySettings(g.getBoolean("enabled"), keys, operatorTokens, upstream, g.getString("upstream-api-key"),
        g.getString("default-agent"), g.getDuration("timeout"), g.getBytes("max-body-bytes"),
        g.getInt("max-in-flight"), g.getInt("max-recordings-pending"), g.getBoolean("fallback-to-stable"), g.getBoolean("capture-tokens"), Map.of(), Map.of());
  }

  /** Never prints a key. */
  @Override
  public String toString() {
    return "GatewaySettings[enabled=" + enabled + ", agentsWithKeys=" + apiKeys.keySet() + ", operatorTokens="
        + (operatorTokens.isEmpty() ? "none" : operatorTokens.size() + " set") + ", timeout=" + timeout
        + ", maxBodyBytes=" + maxBodyBytes + ", fallbackToStable=" + fallbackToStable + ", captureTokens="
        + captureTokens + (endpointCalls.isEmpty() ? "" : ", modelServerCalls=" + endpointCalls) + "]";
  }

  /** The longest one upstream attempt may take: {@code timeout}, or a model server's own when longer. */
  public Duration longestAttempt() {
    Duration longest = timeout;
    for (ServerCalls c : endpointCalls.values()) {
      if (c.timeout().compareTo(longest) > 0) longest = c.timeout();
    }
    return longest;
  }

  /**
   * How long a chat call may take before the server gives up on it: an upstream call (with a
   * server's own retries, the longest of them) and, with fallback-to-stable, the call of the stable,
   * plus room to answer.
   */
  public Duration answerTimeout() {
    Duration longest = timeout;
    for (ServerCalls c : endpointCalls.values()) {
      if (c.longest().compareTo(longest) > 0) longest = c.longest();
    }
    return longest.multipliedBy(fallbackToStable ? 2 : 1).plusSeconds(10);
  }
}
