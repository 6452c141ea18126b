package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.models.models.Model;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code GET /v1/models} (design §7.1: 200, OpenAI's wire format) from an OpenAI client that names no
 * agent: the list does not depend on the agent (every agent sees the one logical model "default"), so on
 * a node without gateway auth, the embedded default, it answers 200. It was a 400 {@code missing_agent},
 * so {@code client.models().list()} (what frameworks and UIs call first to check an OpenAI-compatible
 * server, and a plain {@code curl /v1/models}) failed before any chat (audit of design §7.5). Chat
 * completions still need their agent; with gateway auth on, a wrong key is still the 401.
 */
class GatewayModelListWithoutAgentTest {
  private static GatewayTestNode open;
  private static GatewayTestNode keyed;

  @BeforeAll
  static void start() throws Exception {
    open = GatewayTestNode.start("gateway-models-no-agent", Map.of());
    keyed = GatewayTestNode.start("gateway-models-no-agent-keyed",
        Map.of("agentscope.training.gateway.agents.keyed-agent.api-key", "sk-keyed-agent-key"));
  }

  @AfterAll
  static void stop() {
    if (open != null) open.close();
    if (keyed != null) keyed.close();
  }

  private static OpenAIClient client(GatewayTestNode node, String key) {
    return OpenAIOkHttpClient.builder().apiKey(key).baseUrl(node.uri("/v1").toString()).maxRetries(0).build();
  }

  @Test
  void anOpenAiClientThatNamesNoAgentListsTheLogicalModel() {
    List<Model> models = client(open, "unused").models().list().items();
    assertEquals(1, models.size(), models.toString());
    assertEquals("default", models.get(0).id());
    assertEquals("otl", models.get(0).ownedBy());
    // A client that names its agent still sees it as the owner.
    OpenAIClient named = OpenAIOkHttpClient.builder().apiKey("unused").baseUrl(open.uri("/v1").toString())
        .putHeader("X-Agent-Id", "named-agent").maxRetries(0).build();
    assertEquals("named-agent", named.models().list().items().get(0).ownedBy());
  }

  @Test
  void aChatCompletionStillNeedsItsAgent() {
    com.openai.errors.BadRequestException e = assertThrows(com.openai.errors.BadRequestException.class,
        () -> client(open, "unused").chat().completions().create(
            com.openai.models.chat.completions.ChatCompletionCreateParams.builder().model("default")
                .addUserMessage("hi").build()));
    assertEquals("missing_agent", e.code().orElse(""), e.getMessage());
    // The agent's client knows only the header; the node's side of the fix was not named (trial loop).
    assertTrue(e.getMessage().contains("X-Agent-Id") && e.getMessage().contains("gateway.default-agent"),
        e.getMessage());
  }

  @Test
  void withGatewayKeysAWrongKeyIsStillRefused() {
    com.openai.errors.UnauthorizedException e = assertThrows(com.openai.errors.UnauthorizedException.class,
        () -> client(keyed, "sk-wrong").models().list());
    assertEquals("invalid_api_key", e.code().orElse(""), e.getMessage());
    assertEquals("keyed-agent", client(keyed, "sk-keyed-agent-key").models().list().items().get(0).ownedBy());
  }
}
