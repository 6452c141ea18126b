package io.otl.http.gateway;

import io.otl.core.Ids;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.Optional;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;

/**
 * Who calls the gateway (design §7.5): the agent a request's key belongs to when gateway auth is on,
 * else the agent {@code X-Agent-Id} names. Keys are compared in constant time, every one of them.
 */
final class GatewayIdentity {
  private final GatewaySettings settings;

  GatewayIdentity(GatewaySettings settings) {
    this.settings = settings;
  }

  /**
   * Whether a request comes from an agent's OpenAI client (it names an agent, or presents an agent's
   * gateway key, with agent keys configured), so that {@code /v1/models/default} is OpenAI's model; an
   * operator's request for the agent called "default" carries neither and still reaches the design's
   * models view.
   */
  boolean callsAsAgent(HttpRequest request) {
    if (request.getHeader(GatewayRoutes.AGENT_HEADER).isPresent()) return true;
    Optional<String> auth = io.otl.http.Auth.authorization(request);
    Optional<byte[]> given = io.otl.http.Auth.bearerToken(auth);
    // Only agent keys make a key name an agent. With agent keys configured, any key but the node's API
    // token is an agent's client: a wrong key then gets the gateway's 401, where models.retrieve("default")
    // with a typo in the key got the operator's 200 view of an agent called "default" on a node whose
    // reads are open. With auth.token alone a key names no agent (X-Agent-Id does), so a wrong one is
    // an API read's, which open reads ignore: GET /v1/models/{agentId} answered OpenAI's 401 there.
    if (given.isEmpty() || settings.apiKeys().isEmpty()) return false;
    return !operator(given.get());
  }

  /** Whether {@code given} is one of the node's API tokens; every one is compared, in constant time. */
  private boolean operator(byte[] given) {
    boolean found = false;
    for (String t : settings.operatorTokens()) {
      if (MessageDigest.isEqual(given, t.getBytes(StandardCharsets.UTF_8))) found = true;
    }
    return found;
  }

  /**
   * The agent behind a request: its API key when gateway auth is on (or the node's API token, with
   * X-Agent-Id naming the agent), else X-Agent-Id.
   */
  String identify(HttpRequest request) {
    Optional<String> named = single(request, GatewayRoutes.AGENT_HEADER);
    if (!settings.authEnabled()) {
      return namedAgent(named.orElse(settings.defaultAgent()), "gateway auth is off");
    }
    Optional<String> auth = io.otl.http.Auth.authorization(request);
    if (auth.isPresent() && auth.get().equals(io.otl.http.Auth.TWICE)) {
      throw new OpenAiError(401, "invalid_request_error", null, "invalid_api_key",
          "the Authorization header is sent more than once; send it once");
    }
    Optional<byte[]> bearer = io.otl.http.Auth.bearerToken(auth);
    if (bearer.isEmpty() || bearer.get().length == 0) {
      throw new OpenAiError(401, "invalid_request_error", null, "invalid_api_key",
          "an API key is required: send Authorization: Bearer <the agent's gateway key or the node's API token>");
    }
    byte[] given = bearer.get();
    String agent = null;
    for (Map.Entry<String, String> e : settings.apiKeys().entrySet()) {
      // Every key is compared, in constant time, so the answer's timing says nothing about which matched.
      if (MessageDigest.isEqual(given, e.getValue().getBytes(StandardCharsets.UTF_8))) agent = e.getKey();
    }
    if (operator(given)) {
      return namedAgent(named.orElse(settings.defaultAgent()), "the node's API token names no agent");
    }
    if (agent == null) {
      throw new OpenAiError(401, "invalid_request_error", null, "invalid_api_key",
          "the API key is neither a gateway key of any agent nor the node's API token");
    }
    if (named.isPresent() && !named.get().equals(agent)) {
      throw new OpenAiError(403, "permission_error", GatewayRoutes.AGENT_HEADER, "agent_mismatch",
          "this API key belongs to another agent than " + GatewayRoutes.AGENT_HEADER + " names");
    }
    return agent;
  }

  /**
   * The value of an identity header (the agent, the session). Sent twice with two values (a proxy
   * that adds its own, a client that sets a default and a per-call one), it is a 400: taking the
   * first would record the call under an identity the client may not have meant.
   */
  static Optional<String> single(HttpRequest request, String name) {
    String lower = name.toLowerCase(java.util.Locale.ROOT);
    String first = null;
    for (HttpHeader h : request.getHeaders()) {
      if (!h.is(lower)) continue;
      if (first == null) {
        first = h.value();
      } else if (!first.equals(h.value())) {
        throw OpenAiError.invalid(name, name + " is sent more than once with different values; send it once");
      }
    }
    return Optional.ofNullable(first);
  }

  private static String namedAgent(String agent, String why) {
    if (agent == null || agent.isEmpty()) {
      throw new OpenAiError(400, "invalid_request_error", GatewayRoutes.AGENT_HEADER, "missing_agent",
          // Both fixes named: the agent's (a header) and the operator's (a default), as a client that
          // changed only its base_url cannot tell which side is meant to name the agent.
          "name the agent with the " + GatewayRoutes.AGENT_HEADER + " header, or set "
              + "agentscope.training.gateway.default-agent on the node (" + why + ")");
    }
    String p = Ids.problem(GatewayRoutes.AGENT_HEADER, agent, Ids.MAX_AGENT_ID);
    if (p != null) throw OpenAiError.invalid(GatewayRoutes.AGENT_HEADER, p);
    return agent;
  }
}
