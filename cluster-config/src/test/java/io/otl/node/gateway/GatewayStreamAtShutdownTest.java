package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A stopping node gives the answers in progress {@code http.shutdown-deadline} (docs/configuration.md).
 * pekko-http's termination ended a connection whose response had started, so an answer streamed as
 * server-sent events was cut when the port closed, one second after SIGTERM, and the agent's SDK saw
 * the connection drop (trial t56). The stream now runs to its end, and only then does the node stop.
 */
class GatewayStreamAtShutdownTest {
  private static final String AGENT = "stream-at-stop";

  @Test
  void aStreamRunningWhenTheNodeStopsRunsToItsEnd() throws Exception {
    try (GatewayTestNode gateway = GatewayTestNode.start("gateway-stream-at-shutdown",
        Map.of("agentscope.training.http.shutdown-deadline", "30s"))) {
      gateway.serving(AGENT);
      // Twelve words streamed 400 ms apart: the answer outlasts the 1 s drain by seconds.
      String body = "{\"model\":\"default\",\"stream\":true,\"simulator_chunk_delay_ms\":400,\"messages\":[{\"role\":"
          + "\"user\",\"content\":\"one two three four five six seven eight nine ten eleven twelve\"}]}";
      HttpRequest request = HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
          .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
          .header("X-Agent-Id", AGENT).header("X-Session-Id", "stream-at-stop-1")
          .POST(HttpRequest.BodyPublishers.ofString(body)).build();
      HttpResponse<InputStream> response = HttpClient.newHttpClient()
          .send(request, HttpResponse.BodyHandlers.ofInputStream());
      assertEquals(200, response.statusCode());

      List<String> events = new ArrayList<>();
      try (BufferedReader lines = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
        String first = nextEvent(lines);
        events.add(first);
        // The answer has started: now the node is asked to stop, as SIGTERM would.
        gateway.node.shutdown();
        for (String event = nextEvent(lines); event != null; event = nextEvent(lines)) events.add(event);
      }
      assertEquals("[DONE]", events.get(events.size() - 1), "the stream was cut: " + events);
      String text = String.join("", events.stream().filter(e -> e.contains("\"content\""))
          .map(e -> e.replaceAll(".*\"content\":\"([^\"]*)\".*", "$1")).toList());
      assertTrue(text.endsWith("eleven twelve"), "the whole answer arrived: " + text);
      gateway.node.system().getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
  }

  /** The next {@code data:} payload of the stream; null at its end. */
  private static String nextEvent(BufferedReader lines) throws java.io.IOException {
    for (String line = lines.readLine(); line != null; line = lines.readLine()) {
      if (line.startsWith("data: ")) return line.substring("data: ".length());
    }
    return null;
  }
}
