package io.otl.agentscope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.typesafe.config.ConfigFactory;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The HTTP sink against a real node that asks for a bearer token (DESIGN §7.1). */
class HttpSinkAuthTest {
  private static final String TOKEN = "tok-agentscope-test";
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TestNode.start(TestNode.dir("agentscope-auth"),
        ConfigFactory.parseMap(Map.of("agentscope.training.auth.token", TOKEN)));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  private static List<SessionInput> batch() {
    return List.of(
        new SessionInput.Message("as-msg-u1", null, "user", "I am jo@example.com", null, null),
        new SessionInput.ToolCall("as-tool-c1", null, "c1", "lookup_order",
            JsonNodeFactory.instance.objectNode().put("query", "4711"),
            JsonNodeFactory.instance.objectNode().put("status", "shipped"), true, 12L),
        new SessionInput.Message("as-msg-a1", null, "assistant", "It shipped.", "a1", 40L));
  }

  @Test
  void withTheTokenTheBatchIsStoredOnceEvenWhenSentTwice() throws Exception {
    TrajectorySink sink = TrajectorySink.http("http://127.0.0.1:" + node.httpPort() + "/", TOKEN);
    sink.deliver("as-auth-ok", "support-bot", batch()).toCompletableFuture().get();
    sink.deliver("as-auth-ok", "support-bot", batch()).toCompletableFuture().get();
    JsonNode s = TestNode.session(node, "as-auth-ok", n -> n.path("messages").size() >= 2);
    assertEquals(2, s.path("messages").size(), s.toString());
    assertEquals(1, s.path("toolCalls").size(), s.toString());
    assertEquals("shipped", s.path("toolCalls").get(0).path("output").path("status").asText());
    assertFalse(s.toString().contains("jo@example.com"), "desensitized: " + s);
  }

  @Test
  void withoutTheTokenTheNodeRefusesAndTheFailureIsNotRetriedAndNothingIsStored() throws Exception {
    TrajectorySink sink = TrajectorySink.http("http://127.0.0.1:" + node.httpPort());
    ExecutionException e = assertThrows(ExecutionException.class,
        () -> sink.deliver("as-auth-refused", "support-bot", batch()).toCompletableFuture().get());
    TrajectorySink.DeliveryException refused = (TrajectorySink.DeliveryException) e.getCause();
    assertFalse(refused.retriable(), "a 401 will not pass on a resend: " + refused.getMessage());
    assertTrue(refused.getMessage().contains("401"), refused.getMessage());
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + node.httpPort() + "/v1/sessions/as-auth-refused")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(404, r.statusCode(), r.body());
  }
}
