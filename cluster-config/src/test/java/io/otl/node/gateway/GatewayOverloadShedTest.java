package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.http.ClientConnection;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Under sustained overload the gateway sheds calls at its door instead of piling work up behind it
 * (trial t51: a node at -Xmx512m under W8's 400 req/s filled its heap, stalled in GC for seconds,
 * delayed its cluster heartbeats, and once stopped answering for good).
 *
 * <ul>
 *   <li>{@code gateway.max-recordings-pending} bounds the answered turns whose recording is still
 *       pending: with the journal's writes held up (a lock on its table, as a database that falls
 *       behind), the answers still go out, and once that many recordings wait new calls get 429
 *       {@code overloaded} with Retry-After; every answered turn is stored when the journal is back.
 *   <li>The calls an agent makes on one kept-alive connection leave nothing on it once answered: each
 *       hung its callbacks (its request, answer and stream, ~20 KB) on the connection until the client
 *       closed it.
 * </ul>
 */
class GatewayOverloadShedTest {
  private static final int MAX_PENDING = 3;
  private static GatewayTestNode gateway;
  private static String dbUrl;

  @BeforeAll
  static void start() throws Exception {
    Map<String, Object> settings = new HashMap<>();
    TestDatabases.postgres().entrySet().forEach(e -> settings.put(e.getKey(), e.getValue().unwrapped()));
    dbUrl = (String) settings.get("agentscope.training.db.url");
    settings.put("agentscope.training.gateway.max-recordings-pending", MAX_PENDING);
    gateway = GatewayTestNode.start("gateway-overload-shed", settings).serving("shed", "kept");
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  @Test
  void recordingsPendingCountAgainstTheLimitAndEveryAnsweredTurnIsStored() throws Exception {
    // The agent's first turn, recorded as usual: the journal and the session entities are warm.
    assertEquals(200, gateway.api.chat("shed", "shed-0", "hello", false).status());
    Await.until("the first turn recorded", Duration.ofSeconds(30), () -> gateway.api.get("/v1/sessions/shed-0"),
        r -> r.status() == 200 && r.json().path("messages").size() == 2);

    try (Connection lock = DriverManager.getConnection(dbUrl, TestDatabases.PG_USER, TestDatabases.PG_PASSWORD)) {
      lock.setAutoCommit(false);
      try (Statement st = lock.createStatement()) {
        // Reads go on (the sessions' owners, the routes), writes wait: the recordings cannot land.
        st.execute("LOCK TABLE event_journal IN EXCLUSIVE MODE");
      }
      // Each answer goes out; each turn's recording waits for the journal and counts against the limit.
      for (int i = 1; i <= MAX_PENDING; i++) {
        Http.Response r = gateway.api.chat("shed", "shed-" + i, "turn " + i, i % 2 == 0);
        assertEquals(200, r.status(), r.body());
      }
      Http.Response refused = gateway.api.chat("shed", "shed-refused", "one too many", false);
      assertEquals(429, refused.status(), refused.body());
      assertEquals("overloaded", refused.json().path("error").path("code").asText(), refused.body());
      assertEquals("rate_limit_exceeded", refused.json().path("error").path("type").asText(), refused.body());
      assertTrue(refused.json().path("error").path("message").asText().contains("gateway.max-recordings-pending"),
          refused.body());
      assertEquals("1", refused.headers().firstValue("Retry-After").orElse(""), refused.headers().toString());
      // The node itself still answers.
      assertEquals(200, gateway.api.get("/health/live").status());
      lock.rollback();
    }

    // The journal is back: the recordings land, and calls are let in again.
    Http.Response after = Await.until("a call let in once the recordings landed", Duration.ofSeconds(60),
        () -> gateway.api.chat("shed", "shed-after", "and now?", false), r -> r.status() != 429);
    assertEquals(200, after.status(), after.body());
    for (int i = 1; i <= MAX_PENDING; i++) {
      String session = "shed-" + i;
      Await.until("the turn of " + session + " stored", Duration.ofSeconds(30),
          () -> gateway.api.get("/v1/sessions/" + session),
          r -> r.status() == 200 && r.json().path("messages").size() == 2);
    }
    assertEquals(404, gateway.api.get("/v1/sessions/shed-refused").status(), "a refused call records nothing");
    assertEquals(0.0, recordFailures(), "no answered turn was lost");
  }

  @Test
  void callsOnOneKeptAliveConnectionLeaveNothingOnItOnceAnswered() throws Exception {
    Http agent = new Http(gateway.node.httpPort()); // one client: its calls share one kept-alive connection
    for (int i = 0; i < 40; i++) {
      boolean stream = i % 2 == 1;
      String session = "kept-" + i;
      Http.Response r = Await.until("call " + i + " let in", Duration.ofSeconds(30),
          () -> agent.chat("kept", session, "turn " + session, stream), x -> x.status() != 429);
      assertEquals(200, r.status(), r.body());
    }
    // Nothing waits for these answers any more: the connection, still open, holds no watch of them.
    Await.until("the answered calls' watches let go", Duration.ofSeconds(10), ClientConnection::openWatches,
        n -> n == 0);
  }

  private static double recordFailures() {
    double sum = 0;
    for (String line : gateway.api.get("/metrics").body().split("\n")) {
      if (line.startsWith("otl_gateway_record_failures_total{")) sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
    }
    return sum;
  }
}
