package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Agents whose clients give up on slow streamed answers (openai's timeout before the first token) while
 * other agents' calls go to the same model server, the simulator inside the node as on the embedded
 * default (trial t104: a fleet of asyncio agents). A stream its agent leaves is cancelled upstream, which
 * closes its connection under pekko-http's pool; a call the pool had just handed that connection failed with
 * a 502 "the model server is unreachable (NoMoreElementsNeeded$)" its agent had done nothing to cause, counted
 * against the version. It is a race, so this counts: 7 of 600 calls failed here before the fix; a run
 * without one before it would have proved nothing.
 */
class GatewayClientsGivingUpTest {
  private static GatewayTestNode g;
  private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
      .connectTimeout(Duration.ofSeconds(10)).build();
  private static final ExecutorService GIVING_UP = Executors.newCachedThreadPool();

  @BeforeAll
  static void start() throws Exception {
    g = GatewayTestNode.start("gateway-clients-giving-up", Map.of("agentscope.training.simulator.enabled", true,
        "agentscope.training.simulator.port", 0));
  }

  @AfterAll
  static void stop() {
    GIVING_UP.shutdownNow();
    if (g != null) g.close();
  }

  @Test
  void clientsThatGiveUpCostOtherAgentsNothing() throws Exception {
    Map<Integer, Integer> statuses = new TreeMap<>();
    for (int round = 0; round < 20; round++) {
      List<CompletableFuture<Void>> gone = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        int n = round * 100 + i;
        gone.add(CompletableFuture.runAsync(() -> giveUp(n), GIVING_UP));
        gone.add(CompletableFuture.runAsync(() -> leaveMidStream(n), GIVING_UP));
      }
      List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
      for (int i = 0; i < 30; i++) calls.add(call(round * 100 + i, i % 2 == 0));
      for (CompletableFuture<HttpResponse<String>> c : calls) statuses.merge(c.get().statusCode(), 1, Integer::sum);
      CompletableFuture.allOf(gone.toArray(CompletableFuture[]::new)).get();
    }
    assertEquals(Map.of(200, 600), statuses);
  }

  /** A streamed call whose client closes its connection before the (delayed) first token. */
  private static void giveUp(int n) {
    byte[] body = ("{\"model\":\"default\",\"stream\":true,\"simulator_delay_ms\":" + (700 + n % 7 * 40)
        + ",\"messages\":[{\"role\":\"user\",\"content\":\"slow " + n + " " + "words ".repeat(30) + "\"}]}")
        .getBytes(StandardCharsets.UTF_8);
    try (Socket s = send("gone-" + n, body)) {
      Thread.sleep(500 + n % 4 * 50);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** A streamed call whose client reads its first bytes, then closes its connection. */
  private static void leaveMidStream(int n) {
    byte[] body = ("{\"model\":\"default\",\"stream\":true,\"simulator_chunk_delay_ms\":40"
        + ",\"messages\":[{\"role\":\"user\",\"content\":\"cut " + n + " " + "words ".repeat(30) + "\"}]}")
        .getBytes(StandardCharsets.UTF_8);
    try (Socket s = send("cut-" + n, body)) {
      s.getInputStream().read(new byte[512]);
      Thread.sleep(100 + n % 5 * 50);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** An impatient agent's call on a raw socket, sent whole; the caller decides when it leaves. */
  private static Socket send(String session, byte[] body) throws IOException {
    Socket s = new Socket("127.0.0.1", g.node.httpPort());
    OutputStream out = s.getOutputStream();
    out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        + "X-Agent-Id: impatient\r\nX-Session-Id: " + session + "\r\nContent-Length: " + body.length + "\r\n\r\n")
        .getBytes(StandardCharsets.US_ASCII));
    out.write(body);
    out.flush();
    return s;
  }

  private static CompletableFuture<HttpResponse<String>> call(int n, boolean stream) {
    String body = "{\"model\":\"default\",\"stream\":" + stream + ",\"messages\":[{\"role\":\"user\",\"content\":\"call "
        + n + " " + "words ".repeat(30) + "\"}]}";
    HttpRequest r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + g.node.httpPort() + "/v1/chat/completions"))
        .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json").header("X-Agent-Id", "patient")
        .header("X-Session-Id", "patient-" + n).POST(HttpRequest.BodyPublishers.ofString(body)).build();
    return CLIENT.sendAsync(r, HttpResponse.BodyHandlers.ofString());
  }
}
