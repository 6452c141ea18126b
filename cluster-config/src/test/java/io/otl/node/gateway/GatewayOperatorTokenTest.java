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
}
