package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.model.RoutingTable;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Design §3.3: a session never flips between versions mid-conversation. Before, a session was routed
 * by its bucket against the current ratio alone, so when a canary started (or a step raised the
 * ratio) a running session whose bucket fell under it moved from the stable to the candidate between
 * two turns. Now it keeps the version it started on while that version serves; only a version that
 * stops serving (a rollback) moves it.
 */
class GatewaySessionKeepsItsVersionTest {
  private static final String AGENT = "pin-agent";
  private static final int SESSIONS = 40;
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-pin", Map.of("agentscope.training.model-update.canary-ratio", 0.5,
            "agentscope.training.model-update.steps", List.of(0.75, 1.0)))
        .serving(AGENT);
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  private static String answeredBy(String session, String text) {
    Http.Response r = gateway.api.chat(AGENT, session, text, false);
    assertEquals(200, r.status(), r.body());
    return r.headers().firstValue("X-Model-Version").orElseThrow();
  }

  private static String routeRead(String session) {
    return gateway.api.get("/v1/models/" + AGENT + "/route?sessionId=" + session).json().path("version").asText();
  }

  private static void awaitStored(String session) throws InterruptedException {
    Await.until("session " + session + " stored", Duration.ofSeconds(30),
        () -> gateway.api.get("/v1/sessions/" + session).status(), status -> status == 200);
  }

  @Test
  void runningSessionsStayOnTheirVersionWhenACanaryStartsAndLeaveItOnlyWhenItIsRolledBack() throws Exception {
    List<String> before = new ArrayList<>();
    for (int i = 0; i < SESSIONS; i++) {
      String s = "pin-" + i + "-" + UUID.randomUUID();
      before.add(s);
      assertEquals("v1", answeredBy(s, "first turn"));
    }
    long wouldHaveMoved = before.stream().filter(s -> RoutingTable.bucket(s) < 0.5).count();
    assertTrue(wouldHaveMoved > 0, "some running session's bucket is under the canary's ratio");

    Http.Response v2 = gateway.api.post("/v1/models/" + AGENT + "/versions",
        "{\"version\":\"v2\",\"artifact\":\"file:///models/v2\",\"endpoint\":\"" + gateway.simulator.baseUrl() + "/v1\"}");
    assertEquals(201, v2.status(), v2.body());
    assertTrue(v2.body().contains("CANARY"), v2.body());

    for (String s : before) {
      assertEquals("v1", answeredBy(s, "second turn"), s + " (bucket " + RoutingTable.bucket(s) + ") flipped");
    }
    // The route read answers what the gateway serves, from the session's first journal row.
    for (String s : before) {
      awaitStored(s);
      assertEquals("v1", routeRead(s), s);
    }

    List<String> onCandidate = new ArrayList<>();
    for (int i = 0; i < SESSIONS; i++) {
      String s = "new-" + i + "-" + UUID.randomUUID();
      String first = answeredBy(s, "first turn");
      assertEquals(RoutingTable.bucket(s) < 0.5 ? "v2" : "v1", first, "a new session goes by its bucket");
      if (first.equals("v2")) onCandidate.add(s);
      assertEquals(first, answeredBy(s, "second turn"), s);
    }
    assertTrue(!onCandidate.isEmpty(), "the canary answered new sessions");

    Http.Response back = gateway.api.post("/v1/models/" + AGENT + "/versions/v2/rollback", "{\"reason\":\"test\"}");
    assertEquals(202, back.status(), back.body());
    for (String s : onCandidate) {
      assertEquals("v1", answeredBy(s, "after the rollback"), "a rolled-back version serves nobody: " + s);
    }
  }
}
