package io.otl.http.gateway;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigObject;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Settings of the inference gateway ({@code agentscope.training.gateway}, design §7.5).
 *
 * @param apiKeys agent id → the key that agent sends as {@code Authorization: Bearer …}; empty: no
 *     gateway auth, the agent is named by {@code X-Agent-Id} (or {@code defaultAgent})
 * @param upstreamKeys agent id → the key sent to that agent's model servers (falls back to
 *     {@code upstreamApiKey}); secrets, never logged or returned
 * @param operatorToken the node's API token ({@code auth.token}, empty: none). When set, the gateway is
 *     never open: a call sends an agent's key, or this token with {@code X-Agent-Id} naming the agent
 *     (design §7.1: 401 without the bearer token when {@code auth.token} is set); a secret, never logged
 * @param timeout how long an upstream call may take (non-streaming), or stay silent (streaming)
 * @param maxInFlight calls in flight before the gateway answers 429 with Retry-After
 */
public record GatewaySettings(
    boolean enabled,
    Map<String, String> apiKeys,
    String operatorToken,
    Map<String, String> upstreamKeys,
    String upstreamApiKey,
    String defaultAgent,
    Duration timeout,
    long maxBodyBytes,
    int maxInFlight,
    boolean fallbackToStable,
    boolean captureTokens) {

  public GatewaySettings {
    apiKeys = Map.copyOf(apiKeys);
    upstreamKeys = Map.copyOf(upstreamKeys);
  }

  public boolean authEnabled() {
    return !apiKeys.isEmpty() || !operatorToken.isEmpty();
  }

  /** The key for this agent's model servers, or empty. */
  public String upstreamKeyFor(String agentId) {
    return upstreamKeys.getOrDefault(agentId, upstreamApiKey);
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
    String operatorToken = training.getString("auth.token");
    if (!operatorToken.isEmpty() && keys.containsValue(operatorToken)) {
      // The API token acts for any agent named by X-Agent-Id; as one agent's key it would be ambiguous.
      throw new IllegalArgumentException("gateway.agents: an api-key equals auth.token; give each agent its own key");
    }
    return new GatewaySettings(g.getBoolean("enabled"), keys, operatorToken, upstream, g.getString("upstream-api-key"),
        g.getString("default-agent"), g.getDuration("timeout"), g.getBytes("max-body-bytes"),
        g.getInt("max-in-flight"), g.getBoolean("fallback-to-stable"), g.getBoolean("capture-tokens"));
  }

  /** Never prints a key. */
  @Override
  public String toString() {
    return "GatewaySettings[enabled=" + enabled + ", agentsWithKeys=" + apiKeys.keySet() + ", operatorToken="
        + (operatorToken.isEmpty() ? "none" : "set") + ", timeout=" + timeout
        + ", maxBodyBytes=" + maxBodyBytes + ", fallbackToStable=" + fallbackToStable + ", captureTokens="
        + captureTokens + "]";
  }
}
