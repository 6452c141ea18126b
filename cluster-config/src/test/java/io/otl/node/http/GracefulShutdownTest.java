package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Stopping a node under load: requests in flight finish, new ones are refused (503 or no
 * connection), nothing is answered 5xx otherwise, and every 202 is in the journal afterwards.
 */
class GracefulShutdownTest {

  @Test
  void inFlightRequestsFinishAndEveryAcknowledgedWriteIsDurable() throws Exception {
    Config db = TestDatabases.h2(Files.createTempDirectory("otl-shutdown-"));
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    List<CompletableFuture<Integer>> responses = new ArrayList<>();
    int sessions = 300;
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(db, true))) {
      String base = "http://127.0.0.1:" + node.httpPort();
      for (int i = 0; i < sessions; i++) {
        if (i == sessions / 2) {
          // Some answers are in, the rest of the first half is in flight: now the node starts leaving.
          CompletableFuture.allOf(responses.subList(0, 10).toArray(CompletableFuture[]::new)).get(30, TimeUnit.SECONDS);
          node.shutdown();
        }
        HttpRequest request = HttpRequest.newBuilder(URI.create(base + "/v1/sessions/stop-" + i + "/events"))
            .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(
                "{\"agentId\":\"a\",\"events\":[{\"type\":\"message\",\"eventId\":\"m\",\"role\":\"user\",\"content\":\"x\"}]}"))
            .build();
        responses.add(client.sendAsync(request, HttpResponse.BodyHandlers.discarding())
            .thenApply(HttpResponse::statusCode)
            .exceptionally(e -> -1)); // refused connection once the port is unbound
      }
      CompletableFuture.allOf(responses.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
      node.system().getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
    List<Integer> acknowledged = new ArrayList<>();
    for (int i = 0; i < sessions; i++) {
      int status = responses.get(i).get();
      assertTrue(status == 202 || status == 503 || status == -1, "session " + i + " got " + status);
      if (status == 202) acknowledged.add(i);
    }
    assertTrue(acknowledged.size() >= 10, "the requests before the stop were served: " + acknowledged.size());
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(db, false))) {
      for (int i : acknowledged) {
        var trajectory = node.dataCollector().trajectory("stop-" + i).toCompletableFuture().get(30, TimeUnit.SECONDS);
        assertTrue(trajectory.isPresent(), "acknowledged session stop-" + i + " is not in the journal");
        assertEquals(1, trajectory.get().messages().size());
      }
    }
  }
}
