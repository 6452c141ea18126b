package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.errors.BadRequestException;
import com.openai.errors.UnauthorizedException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import io.otl.node.testing.Http;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A node with {@code auth.token} set and no per-agent gateway keys: the gateway must not be the one
 * open door of a protected node (design §7.1, 401 without the bearer token). A call sends the node's
 * token and names its agent with X-Agent-Id; without the token it is 401 and nothing is stored or
 * forwarded. Driven by the official OpenAI Java SDK, as agents call it.
 */
class GatewayOperatorTokenTest {
  private static final String TOKEN = "node-token-" + UUID.randomUUID();
  private static final String AGENT = "guarded-bot";
  private static GatewayTestNode gateway;
  private static Http api;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-token", Map.of("agentscope.training.auth.token", TOKEN)).serving(AGENT);
    api = gateway.api;
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  private static OpenAIClient client(String key, String agentHeader) {
    var b = OpenAIOkHttpClient.builder().apiKey(key).baseUrl(gateway.uri("/v1").toString())
        .maxRetries(0);
    if (agentHeader != null) b.putHeader("X-Agent-Id", agentHeader);
    return b.build();
  }

  private static ChatCompletionCreateParams ask(String session) {
    return ChatCompletionCreateParams.builder().model("default").addUserMessage("is anyone guarding this?")
        .putAdditionalHeader("X-Session-Id", session).build();
  }

  @Test
  void withoutTheNodesTokenACallIs401AndNothingIsForwardedOrStored() {
    long before = gateway.simulatorRequests();
    String session = "guard-" + UUID.randomUUID();
    UnauthorizedException e = assertThrows(UnauthorizedException.class,
        () -> client("not-the-token", AGENT).chat().completions().create(ask(session)));
    assertEquals(401, e.statusCode());
    assertEquals(before, gateway.simulatorRequests(), "nothing forwarded");
    assertEquals(404, api.get("/v1/sessions/" + session).status(), "nothing stored");
  }

  @Test
  void theNodesTokenWithXAgentIdIsAnsweredAndRecordedForThatAgent() throws Exception {
    String session = "guard-" + UUID.randomUUID();
    ChatCompletion c = client(TOKEN, AGENT).chat().completions().create(ask(session));
    assertTrue(c.choices().get(0).message().content().isPresent(), c.toString());
    Http.Response s = null;
    for (int i = 0; i < 100; i++) {
      s = api.get("/v1/sessions/" + session);
      if (s.status() == 200 && s.body().contains(c.id())) break;
      Thread.sleep(100);
    }
    assertEquals(200, s.status(), s.body());
    assertEquals(AGENT, s.json().path("agentId").asText(), s.body());
  }

  @Test
  void theNodesTokenWithoutAnAgentIs400() {
    BadRequestException e = assertThrows(BadRequestException.class,
        () -> client(TOKEN, null).chat().completions().create(ask("guard-" + UUID.randomUUID())));
    assertEquals(400, e.statusCode());
    assertTrue(String.valueOf(e.getMessage()).contains("X-Agent-Id"), String.valueOf(e.getMessage()));
  }

  /**
   * Reads are open on this node, and with no agent keys a key names no agent: a wrong bearer token on
   * the API's GET /v1/models/{agentId} is ignored as on every other open read. It was OpenAI's 401
   * invalid_api_key, the gateway's answer, for that one read (trial t47). A request that names its
   * agent is the gateway's client and keeps the gateway's 401.
   */
  @Test
  void aWrongTokenOnTheModelsViewIsIgnoredAsOnEveryOpenRead() {
    Http anyone = new Http(gateway.uri("/").getPort());
    Http.Response wrong = anyone.get("/v1/models/" + AGENT, "Authorization", "Bearer not-the-token");
    assertEquals(200, wrong.status(), wrong.body());
    assertEquals(AGENT, wrong.json().path("agentId").asText(), wrong.body());
    Http.Response route = anyone.get("/v1/models/" + AGENT + "/route?sessionId=s", "Authorization", "Bearer x");
    assertEquals(200, route.status(), "the neighbouring read, for comparison: " + route.body());
    // "default" names no agent's OpenAI model here (no agent keys, no X-Agent-Id): the API's view of an
    // agent called "default", the same answer with a wrong token as without one (404 here: no versions).
    Http.Response defaultWrong = anyone.get("/v1/models/default", "Authorization", "Bearer not-the-token");
    Http.Response defaultNone = anyone.get("/v1/models/default");
    assertEquals(defaultNone.status(), defaultWrong.status(), defaultWrong.body());
    assertEquals(defaultNone.body(), defaultWrong.body());
    Http.Response asAgent = anyone.get("/v1/models/default", "Authorization", "Bearer not-the-token",
        "X-Agent-Id", AGENT);
    assertEquals(401, asAgent.status(), asAgent.body());
    assertEquals("invalid_api_key", asAgent.json().path("error").path("code").asText(), asAgent.body());
  }
}
