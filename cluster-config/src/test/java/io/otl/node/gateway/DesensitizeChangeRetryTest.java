package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.node.testing.Http;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * docs/data-hardening.md "Changing the rules", over HTTP with a real restart: an events-API batch
 * without eventIds, stored under the default rules, is retried after the operator restarted the node
 * with {@code patterns = ["email"]}. The retry derived its id over the text now stored as sent, a new
 * id, and the message was stored a second time with the phone number raw (trial t58). (In this package
 * for {@link GatewayTestNode}, a node that restarts on its own journal.)
 */
class DesensitizeChangeRetryTest {
  private GatewayTestNode node;

  @AfterEach
  void stop() {
    if (node != null) node.close();
  }

  @Test
  void aBatchRetriedAfterARuleWasLeftOutIsADuplicate() throws Exception {
    node = GatewayTestNode.start("desensitize-change-retry", Map.of());
    String batch = "{\"agentId\":\"rules-agent\",\"events\":[{\"type\":\"message\",\"role\":\"user\","
        + "\"content\":\"call 13812345678 now\"}]}";
    Http.Response first = node.api.post("/v1/sessions/rules-retry-1/events", batch);
    assertEquals(202, first.status(), first.body());
    assertEquals(1, first.json().path("accepted").asInt(), first.body());

    node = node.restartedWith(Map.of("agentscope.training.data-collector.desensitize.patterns", List.of("email")));
    Http.Response retry = node.api.post("/v1/sessions/rules-retry-1/events", batch);
    assertEquals(202, retry.status(), retry.body());
    assertEquals(0, retry.json().path("accepted").asInt(), retry.body());
    assertEquals(1, retry.json().path("duplicates").asInt(), retry.body());
    var messages = node.api.get("/v1/sessions/rules-retry-1").json().path("messages");
    assertEquals(1, messages.size(), messages.toString());
    assertEquals("call [PHONE] now", messages.path(0).path("content").asText());
  }
}
