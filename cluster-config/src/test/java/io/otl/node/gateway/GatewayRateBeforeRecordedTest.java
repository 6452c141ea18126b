package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.node.testing.Http;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Feedback naming an answer this node gave but has not recorded yet, after the write's wait for that
 * recording ran out ({@code http.ask-timeout}). In trial t107 (three nodes, calls spread over them, one
 * node killed) the answering node's recordings were being sent again while the session moved, the
 * feedback waited its 5 s, reached the moved session first and got 404 "no response with that msgId",
 * for an answer the agent held and the session stored a moment later. A 404 tells a client not to retry;
 * it is now a 503 with Retry-After while this node still has that session's answer to record. Here the
 * same wait runs out deterministically: the answer is still streaming (its id is in the first chunk) for
 * longer than the 1 s ask timeout.
 */
class GatewayRateBeforeRecordedTest {
  private static final String AGENT = "rate-early";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static GatewayTestNode gateway;
  private static Http api;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-rate-early", Map.of("agentscope.training.http.ask-timeout", "1s"));
    gateway.serving(AGENT);
    api = gateway.api;
  }

  @AfterAll
  static void stop() throws Exception {
    if (gateway != null) gateway.close();
  }

  @Test
  void feedbackOvertakingItsAnswersRecordingIsA503ToRetryNotA404() throws Exception {
    String session = "rate-early-1";
    String feedback;
    // Twelve words streamed 400 ms apart: the answer outlasts the feedback's 1 s wait by seconds.
    try (BufferedReader lines = stream(session)) {
      String responseId = JSON.readTree(nextEvent(lines)).path("id").asText();
      feedback = "{\"kind\":\"THUMBS_UP\",\"msgId\":\"" + responseId + "\"}";
      Http.Response early = api.post("/v1/sessions/" + session + "/feedback", feedback);
      assertEquals(503, early.status(), early.body());
      assertTrue(early.headers().firstValue("Retry-After").isPresent(), "Retry-After: " + early.body());
      assertTrue(early.body().contains("not recorded yet"), early.body());
      while (nextEvent(lines) != null) {
        // the rest of the answer
      }
    }
    // Sent again, as the 503 says: the answer is recorded, the feedback lands on it.
    Http.Response retried = api.post("/v1/sessions/" + session + "/feedback", feedback);
    assertEquals(202, retried.status(), retried.body());
    JsonNode stored = api.get("/v1/sessions/" + session).json().path("feedback");
    assertEquals(1, stored.size(), stored.toString());
  }

  /**
   * The task's result, posted while the node's last answer is not recorded yet and the wait for it ran
   * out: it went ahead and completed the session, and the answer recorded after it was not part of what
   * the session handed to training. It is a 503 to retry as feedback is; sent again, it keeps the answer.
   */
  @Test
  void aResultOvertakingTheLastAnswersRecordingIsA503ToRetry() throws Exception {
    String session = "result-early-1";
    String result = "{\"agentId\":\"" + AGENT + "\",\"events\":[{\"type\":\"result\",\"status\":\"SUCCESS\"}]}";
    String responseId;
    try (BufferedReader lines = stream(session)) {
      responseId = JSON.readTree(nextEvent(lines)).path("id").asText();
      Http.Response early = api.post("/v1/sessions/" + session + "/events", result);
      assertEquals(503, early.status(), early.body());
      assertTrue(early.headers().firstValue("Retry-After").isPresent(), "Retry-After: " + early.body());
      while (nextEvent(lines) != null) {
        // the rest of the answer
      }
    }
    Http.Response retried = api.post("/v1/sessions/" + session + "/events", result);
    assertEquals(202, retried.status(), retried.body());
    JsonNode stored = api.get("/v1/sessions/" + session).json();
    assertEquals("COMPLETED", stored.path("status").asText());
    JsonNode messages = stored.path("messages");
    assertEquals(responseId, messages.get(messages.size() - 1).path("msgId").asText(), messages.toString());
  }

  /** A streamed answer of twelve words 400 ms apart, read by the caller. */
  private static BufferedReader stream(String session) throws Exception {
    String body = "{\"model\":\"default\",\"stream\":true,\"simulator_chunk_delay_ms\":400,\"messages\":[{\"role\":"
        + "\"user\",\"content\":\"one two three four five six seven eight nine ten eleven twelve\"}]}";
    HttpRequest request = HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
        .header("X-Agent-Id", AGENT).header("X-Session-Id", session)
        .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    HttpResponse<InputStream> response = HttpClient.newHttpClient()
        .send(request, HttpResponse.BodyHandlers.ofInputStream());
    assertEquals(200, response.statusCode());
    return new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8));
  }

  /** The next {@code data:} payload of the stream; null at its end. */
  private static String nextEvent(BufferedReader lines) throws java.io.IOException {
    for (String line = lines.readLine(); line != null; line = lines.readLine()) {
      if (line.startsWith("data: ")) return line.substring("data: ".length());
    }
    return null;
  }
}
