package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.otl.http.gateway.GatewayRoutes;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import io.otl.node.testing.LogCapture;
import io.otl.node.testing.TestDatabases;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The AgentScope {@code model} section's {@code timeout_seconds} and {@code max_retries} say how its
 * users want their model server called; with the agent pointed at the gateway, the gateway is that
 * server's client. Both were parsed and only warned about: a provider's passing 503 reached the agent
 * as a 502, and a section's short timeout was never applied (gateway.timeout was).
 */
class ModelSectionCallsTest {

  private static final byte[] ANSWER = ("{\"id\":\"chatcmpl-r1\",\"object\":\"chat.completion\",\"created\":1,"
      + "\"model\":\"gpt-4o-mini\",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hello\"},"
      + "\"finish_reason\":\"stop\"}]}").getBytes(StandardCharsets.UTF_8);

  @Test
  void aProviderFailingLessOftenThanMaxRetriesAnswersTheAgent() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    // Unavailable twice, then well: within max_retries = 3.
    HttpServer provider = provider(exchange -> calls.incrementAndGet() <= 2 ? 503 : 200, null);
    try (TrainingNode node = node("retries", provider, 60, 3)) {
      Http.Response r = new Http(node.httpPort()).chat("retry-bot", "retry-s-1", "Hi", false);

      assertEquals(200, r.status(), r.body());
      assertTrue(r.body().contains("hello"), r.body());
      assertEquals(3, calls.get());
    } finally {
      provider.stop(0);
    }
  }

  @Test
  void aProviderStillFailingAfterMaxRetriesIsA502NamingTheTries() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    HttpServer provider = provider(exchange -> {
      calls.incrementAndGet();
      return 503;
    }, null);
    try (TrainingNode node = node("retries-spent", provider, 60, 2)) {
      Http.Response r = new Http(node.httpPort()).chat("retry-bot", "retry-s-2", "Hi", false);

      assertEquals(502, r.status(), r.body());
      assertTrue(r.body().contains("tried 3 times: agentscope.model.max-retries"), r.body());
      assertEquals(3, calls.get());
    } finally {
      provider.stop(0);
    }
  }

  @Test
  void aSilentProviderGetsTheSectionsTimeoutNotTheGateways() throws Exception {
    // Never answers until the test ends: only timeout_seconds (1 s, not gateway.timeout's 60 s) ends the call.
    CountDownLatch end = new CountDownLatch(1);
    AtomicInteger calls = new AtomicInteger();
    HttpServer provider = provider(exchange -> {
      calls.incrementAndGet();
      return 200;
    }, end);
    try (TrainingNode node = node("timeout", provider, 1, 0)) {
      Http.Response r = new Http(node.httpPort()).chat("slow-bot", "slow-s-1", "Hi", false);

      assertEquals(504, r.status(), r.body());
      assertTrue(r.body().contains("did not answer within 1s (agentscope.model.timeout-seconds)"), r.body());
      assertEquals(1, calls.get());
    } finally {
      end.countDown();
      provider.stop(0);
    }
  }

  @Test
  void anAgentThatLeftIsNotRetriedFor() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    CountDownLatch called = new CountDownLatch(1);
    CountDownLatch answer = new CountDownLatch(1);
    HttpServer provider = provider(exchange -> {
      calls.incrementAndGet();
      called.countDown();
      return 503;
    }, answer);
    try (TrainingNode node = node("client-left", provider, 60, 3)) {
      byte[] body = "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"
          .getBytes(StandardCharsets.UTF_8);
      try (Socket agent = new Socket(InetAddress.getLoopbackAddress(), node.httpPort())) {
        OutputStream out = agent.getOutputStream();
        out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "X-Agent-Id: retry-bot\r\nX-Session-Id: retry-s-left\r\nContent-Length: " + body.length + "\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        out.flush();
        assertTrue(called.await(30, TimeUnit.SECONDS), "the provider was never called");
      } // the agent's client gives up while the provider still holds its first answer
      answer.countDown();

      // The failed call is recorded once the gateway has given up on it, retries included.
      Http api = new Http(node.httpPort());
      Await.until("the failed turn of retry-s-left recorded", Duration.ofSeconds(60),
          () -> api.get("/v1/sessions/retry-s-left"), r -> r.status() == 200);
      assertEquals(1, calls.get());
    } finally {
      provider.stop(0);
    }
  }

  /** A candidate that fails after the agent has gone is not handed to the stable: nobody waits for the answer. */
  @Test
  void aCandidateFailingAfterTheAgentLeftIsNotRetriedOnTheStable() throws Exception {
    AtomicInteger stableCalls = new AtomicInteger();
    HttpServer stable = provider(exchange -> {
      stableCalls.incrementAndGet();
      return 200;
    }, null);
    CountDownLatch called = new CountDownLatch(1);
    CountDownLatch answer = new CountDownLatch(1);
    HttpServer candidate = provider(exchange -> {
      called.countDown();
      return 503;
    }, answer);
    try (TrainingNode node = node("fallback-left", stable, 60, 0);
        LogCapture gatewayLog = new LogCapture(GatewayRoutes.class)) {
      Http api = new Http(node.httpPort());
      Http.Response v1 = api.post("/v1/models/retry-bot/versions", "{\"version\":\"v1\",\"artifact\":\"v1\","
          + "\"endpoint\":\"http://127.0.0.1:" + candidate.getAddress().getPort() + "/api\",\"servedModel\":\"m1\"}");
      assertEquals(201, v1.status(), v1.body());
      Await.until("v1 in its canary", Duration.ofSeconds(30), () -> api.get("/v1/models/retry-bot"),
          r -> r.body().contains("CANARY"));
      String session = null;
      for (int i = 0; session == null && i < 5000; i++) {
        String id = "left-" + i;
        if (api.get("/v1/models/retry-bot/route?sessionId=" + id).json().path("version").asText().equals("v1")) {
          session = id;
        }
      }
      assertTrue(session != null, "no session routed to the candidate");
      byte[] body = "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"
          .getBytes(StandardCharsets.UTF_8);
      try (Socket agent = new Socket(InetAddress.getLoopbackAddress(), node.httpPort())) {
        OutputStream out = agent.getOutputStream();
        out.write(("POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "X-Agent-Id: retry-bot\r\nX-Session-Id: " + session + "\r\nContent-Length: " + body.length
            + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        out.flush();
        assertTrue(called.await(30, TimeUnit.SECONDS), "the candidate was never called");
      } // the agent's client gives up while the candidate still holds its answer
      String gone = session;
      // The node reads the closed connection on its own time: the candidate answers only once it has.
      Await.until("the node saw the agent's connection of " + gone + " end", Duration.ofSeconds(30),
          () -> gatewayLog.lines("INFO"),
          lines -> lines.stream().anyMatch(l -> l.contains("session " + gone + " ") && l.contains("connection ended")));
      answer.countDown();

      String failed = session;
      Await.until("the failed turn of " + failed + " recorded", Duration.ofSeconds(60),
          () -> api.get("/v1/sessions/" + failed), r -> r.status() == 200);
      assertEquals(0, stableCalls.get());
    } finally {
      stable.stop(0);
      candidate.stop(0);
    }
  }

  private interface Status {
    int of(com.sun.net.httpserver.HttpExchange exchange);
  }

  /** An OpenAI-compatible provider at /api answering with {@code status}; holding each call until {@code hold} opens. */
  private static HttpServer provider(Status status, CountDownLatch hold) throws Exception {
    HttpServer provider = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    provider.setExecutor(java.util.concurrent.Executors.newCachedThreadPool());
    provider.createContext("/api/chat/completions", exchange -> {
      exchange.getRequestBody().readAllBytes();
      int code = status.of(exchange);
      if (hold != null) {
        try {
          hold.await(120, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      byte[] body = code == 200 ? ANSWER
          : "{\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\"}}".getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "application/json");
      exchange.sendResponseHeaders(code, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    provider.start();
    return provider;
  }

  /** A node whose config.toml's model section, as AgentScope users write it, names the provider. */
  private static TrainingNode node(String name, HttpServer provider, int timeoutSeconds, int maxRetries)
      throws Exception {
    Path dir = TestDatabases.outputDir("model-calls-" + name);
    Path toml = Files.writeString(dir.resolve("config.toml"), String.join("\n",
        "[model]",
        "provider = \"openai-compatible\"",
        "base_url = \"http://127.0.0.1:" + provider.getAddress().getPort() + "/api\"",
        "model_name = \"gpt-4o-mini\"",
        "timeout_seconds = " + timeoutSeconds,
        "max_retries = " + maxRetries, ""));
    return TrainingNode.start(Optional.of(toml), TestDatabases.node(TestDatabases.h2(dir), true));
  }
}
