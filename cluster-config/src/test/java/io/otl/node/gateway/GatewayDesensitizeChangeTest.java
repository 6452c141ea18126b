package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * docs/data-hardening.md "Changing the rules": an operator adds a custom desensitize pattern and
 * restarts the node while conversations are open. Their next call resends the history, which the new
 * rule now matches: each resent message hashed to a new id and the history was stored a second time,
 * the old turns raw and again with the rule's placeholder (trial t58), so the trajectory trained on
 * held every such turn twice.
 */
class GatewayDesensitizeChangeTest {
  private static final String AGENT = "rules-agent";
  private static final ObjectMapper JSON = new ObjectMapper();
  private GatewayTestNode gateway;

  @AfterEach
  void stop() {
    if (gateway != null) gateway.close();
  }

  private String call(String session, ArrayNode messages) {
    String body = JSON.createObjectNode().put("model", "default").set("messages", messages).toString();
    Http.Response r = gateway.api.postWithHeaders("/v1/chat/completions", body.getBytes(StandardCharsets.UTF_8),
        "X-Agent-Id", AGENT, "X-Session-Id", session);
    assertEquals(200, r.status(), r.body());
    return r.json().path("choices").path(0).path("message").path("content").asText();
  }

  private ArrayNode messages(String... roleThenContent) {
    ArrayNode a = JSON.createArrayNode();
    for (int i = 0; i < roleThenContent.length; i += 2) {
      a.add(JSON.createObjectNode().put("role", roleThenContent[i]).put("content", roleThenContent[i + 1]));
    }
    return a;
  }

  private JsonNode storedMessages(String session, int atLeast) throws InterruptedException {
    Await.until(session + " has " + atLeast + " messages", Duration.ofSeconds(20),
        () -> gateway.api.get("/v1/sessions/" + session).json().path("messages").size(), n -> n >= atLeast);
    Thread.sleep(300);
    return gateway.api.get("/v1/sessions/" + session).json().path("messages");
  }

  @Test
  void theResentHistoryIsNotStoredAgainAfterACustomPatternWasAdded() throws Exception {
    gateway = GatewayTestNode.start("gateway-rules-change", Map.of()).serving(AGENT);
    String session = "rules-change-1";
    String question = "my code is secretword42, and my mail bob@example.com";
    String answer = call(session, messages("system", "You are terse.", "user", question));
    storedMessages(session, 3);

    gateway = gateway.restartedWith(Map.of("agentscope.training.data-collector.desensitize.custom",
        List.of("\\bsecretword\\d+\\b")));
    call(session, messages("system", "You are terse.", "user", question, "assistant", answer, "user", "and then?"));

    JsonNode stored = storedMessages(session, 5);
    assertEquals(5, stored.size(), "system, question, answer, the next question and its answer, once each: " + stored);
    // What was stored before the change stays as it was stored; the rule applies to what is new.
    assertEquals("my code is secretword42, and my mail [EMAIL]", stored.path(1).path("content").asText());
    assertEquals("and then?", stored.path(3).path("content").asText());
    assertEquals(List.of("system", "user", "assistant", "user", "assistant"),
        List.of(stored.path(0).path("role").asText(), stored.path(1).path("role").asText(),
            stored.path(2).path("role").asText(), stored.path(3).path("role").asText(),
            stored.path(4).path("role").asText()));
  }
}
