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
 * Only a refused connection counts as "refused": a reset, an early close or a time-out is a
 * request the node dropped, and fails the test.
 */
class GracefulShutdownTest {
  /** No connection was made (refused, or not accepted in time by the leaving node): the request never reached it. */
  private static final int REFUSED = -1;

  /**
   * Failing to connect is the only transport error a stopping node may cause; anything once
   * connected (reset, EOF mid-response, a response time-out) is a request the node dropped and
   * fails the test.
   */
  private static int refusedOrFail(int session, boolean afterStop, Throwable e) {
    Throwable cause = e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e;
    if (cause instanceof java.net.ConnectException || cause instanceof java.net.http.HttpConnectTimeoutException) {
      return REFUSED;
    }
    throw new AssertionError("the stopping node dropped the request of session " + session
        + (afterStop ? " (sent after the stop began)" : " (sent before the stop)") + ": " + cause, cause);
  }

  @Test
  void inFlightRequestsFinishAndEveryAcknowledgedWriteIsDurable() throws Exception {
    Config db = TestDatabases.h2(Files.createTempDirectory("otl-shutdown-"));
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    HttpClient afterStop = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    List<CompletableFuture<Integer>> responses = new ArrayList<>();
    int sessions = 300;
    // The burst after the stop must land inside the drain: when the port closes, a connection the
    // kernel accepted but the node had not yet read is closed unanswered (TCP, not the node). On a
    // loaded machine opening 150 connections can outlast the default 1 s, so the test drains longer.
    Config nodeConfig = com.typesafe.config.ConfigFactory.parseString("agentscope.training.http.stop-drain = 5s")
        .withFallback(TestDatabases.node(db, true));
    try (TrainingNode node = TrainingNode.start(nodeConfig)) {
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
        // After the stop, requests go through a client of their own that has no connection yet: a
        // pooled connection that went idle just as the stopping node closes it carries a request the
        // node never saw (an ordinary HTTP race that clients resend on). The client exists before the
        // stop, so the burst is sent within the node's stop drain (http.stop-drain), which answers 503.
        HttpClient sender = i < sessions / 2 ? client : afterStop;
        int session = i;
        boolean sentAfterStop = i >= sessions / 2;
        responses.add(sender.sendAsync(request, HttpResponse.BodyHandlers.discarding())
            .thenApply(HttpResponse::statusCode)
            .exceptionally(e -> refusedOrFail(session, sentAfterStop, e)));
      }
      CompletableFuture.allOf(responses.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
      node.system().getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
    List<Integer> acknowledged = new ArrayList<>();
    for (int i = 0; i < sessions; i++) {
      int status = responses.get(i).get();
      assertTrue(status == 202 || status == 503 || status == REFUSED, "session " + i + " got " + status);
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
