package io.otl.node.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The console in a real headless browser against a real node (H2 journal, auth on for reads
 * too), with a scenario loaded through the public HTTP API: sessions with tool calls, feedback
 * and results; model versions registered, promoted, one rolled back with a reason, one in canary.
 * The agent's training pool shows on its card; jobs pages with jobs in every state, an automatic
 * rollback's figures and a 503 are covered by {@link ConsoleJobsAndRolloutBrowserTest}.
 */
class ConsoleBrowserTest {
  static final String TOKEN = "console-test-token";
  static final String AGENT = "support-bot";
  static final String ROLLBACK_REASON = "p95 latency doubled on the checkout flow";
  static final Duration WAIT = Duration.ofSeconds(30);

  @TempDir static Path dir;
  static TrainingNode node;
  static Http api;
  static String base;

  @BeforeAll
  static void start() {
    HeadlessChromium.requireBrowser();
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir), true).withFallback(ConfigFactory.parseMap(Map.of(
        "agentscope.training.auth.token", TOKEN,
        "agentscope.training.auth.protect-reads", true))));
    base = "http://127.0.0.1:" + node.httpPort();
    api = new Http(node.httpPort()).withToken(TOKEN);
    loadScenario();
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  private static void expect(int status, Http.Response r, String what) {
    assertEquals(status, r.status(), what + ": " + r.body());
  }

  static void loadScenario() {
    expect(202, api.post("/v1/sessions/s-checkout-1/events", """
        {"agentId":"support-bot","events":[
          {"type":"start","eventId":"st","at":"2025-06-01T10:00:00Z","agentVersion":"1.4.2","modelVersion":"v2","metadata":{"channel":"web"}},
          {"type":"message","eventId":"m1","at":"2025-06-01T10:00:01Z","role":"user","content":"My order is late, call me on 13812345678 or mail ann@example.com"},
          {"type":"tool_call","eventId":"t1","at":"2025-06-01T10:00:02Z","callId":"call-7","toolName":"lookup_order","input":{"orderId":"A-1009"},"output":{"status":"in transit","eta":"tomorrow"},"success":true,"latencyMs":120},
          {"type":"reasoning","eventId":"r1","at":"2025-06-01T10:00:03Z","index":0,"thought":"The parcel is in transit","action":"answer","observation":"eta known"},
          {"type":"message","eventId":"m2","at":"2025-06-01T10:00:04Z","role":"assistant","content":"Your parcel A-1009 is in transit and arrives tomorrow.","msgId":"resp-42","latencyMs":840},
          {"type":"result","eventId":"res","at":"2025-06-01T10:00:05Z","status":"SUCCESS","detail":"answered"}]}
        """), "session 1");
    expect(202, api.post("/v1/sessions/s-checkout-1/feedback", "{\"kind\":\"RATING\",\"value\":5,\"feedbackId\":\"fb-1\",\"msgId\":\"resp-42\"}"), "rating");
    expect(202, api.post("/v1/sessions/s-checkout-1/feedback", "{\"kind\":\"ADOPTED\",\"feedbackId\":\"fb-2\"}"), "adopted");
    expect(202, api.post("/v1/sessions/s-checkout-2/events", """
        {"agentId":"support-bot","events":[
          {"type":"start","eventId":"st","modelVersion":"v3"},
          {"type":"message","eventId":"m1","role":"user","content":"Cancel my subscription"},
          {"type":"tool_call","eventId":"t1","callId":"call-9","toolName":"cancel_subscription","input":{"plan":"pro"},"output":{"error":"timeout"},"success":false,"latencyMs":3000},
          {"type":"reasoning","eventId":"r9","action":"error","observation":"java.util.concurrent.TimeoutException"},
          {"type":"result","eventId":"res","status":"FAILURE","detail":"tool timed out"}]}
        """), "session 2");
    expect(202, api.post("/v1/sessions/s-checkout-2/feedback", "{\"kind\":\"THUMBS_DOWN\",\"feedbackId\":\"fb-3\"}"), "thumbs");

    String body = "{\"version\":\"%s\",\"artifact\":\"s3://models/support-bot/%s\",\"endpoint\":\"http://infer:8000/%s\"}";
    expect(201, api.post("/v1/models/" + AGENT + "/versions", body.formatted("v1", "v1", "v1")), "register v1");
    expect(201, api.post("/v1/models/" + AGENT + "/versions", body.formatted("v2", "v2", "v2")), "register v2");
    expect(202, api.post("/v1/models/" + AGENT + "/versions/v2/promote", null), "promote v2");
    expect(201, api.post("/v1/models/" + AGENT + "/versions", body.formatted("v3", "v3", "v3")), "register v3");
    expect(202, api.post("/v1/models/" + AGENT + "/versions/v3/rollback", "{\"reason\":\"" + ROLLBACK_REASON + "\"}"),
        "roll back v3");
    expect(201, api.post("/v1/models/" + AGENT + "/versions", body.formatted("v4", "v4", "v4")), "register v4");
    JsonNode models = api.get("/v1/models/" + AGENT).json();
    assertEquals("v2", models.path("stable").asText(), models.toString());
    assertEquals("v4", models.path("candidate").asText(), models.toString());
  }

  @Test
  void consoleShowsAgentsModelsRollbackAndSessionsAndHonoursTheToken() throws Exception {
    try (HeadlessChromium browser = HeadlessChromium.launch(1400, 1000)) {
      // 1. Without the token: a clear 401 message, nothing else.
      browser.navigate(base + "/console/?agent=" + AGENT + "#/agents");
      browser.waitFor("document.body.dataset.ready === 'true'", WAIT);
      browser.waitFor("document.body.innerText.includes('Not authorised (401)')", WAIT);
      String unauthorised = browser.text();
      assertTrue(unauthorised.contains("Enter it in the Token box"), unauthorised);
      browser.screenshot("node-01-unauthorised");

      // 2. Type the token (kept in sessionStorage, never in localStorage) and use it.
      browser.eval("document.getElementById('token-input').value = '" + TOKEN + "';"
          + "document.getElementById('token-save').click(); true");
      browser.waitFor("document.querySelector('[data-agent=\"" + AGENT + "\"] [data-field=\"stable\"]')", WAIT);
      assertEquals(TOKEN, browser.eval("sessionStorage.getItem('otl.console.token')").asText());
      assertTrue(browser.eval("JSON.stringify(localStorage)").asText().indexOf(TOKEN) < 0, "token leaked to localStorage");
      String agents = browser.text();
      String card = browser.eval("document.querySelector('[data-agent=\"" + AGENT + "\"]').innerText").asText();
      assertTrue(card.contains("v2") && card.contains("STABLE") && card.contains("95%"), card);
      String candidate = browser.eval("document.querySelector('[data-agent=\"" + AGENT
          + "\"] [data-field=\"candidate\"]').innerText").asText();
      assertTrue(candidate.contains("v4") && candidate.contains("CANARY") && candidate.contains("5%"), candidate);
      // The training pool of the agent, against min-samples (the completed sessions above).
      assertTrue(card.contains("Training pool") && card.contains("/ 1000 samples"), card);
      assertTrue(card.contains("threshold"), card);
      assertTrue(card.contains("% of min-samples)"), card);
      // Past the threshold the share says so, not "166666.7% of min-samples" (min-samples 1)
      assertEquals("min-samples reached", browser.eval(
          "import('/console/js/views/agents.js').then(m => m.poolShare(1666, 1))").asText());
      browser.screenshot("node-02-agents");
      // An agent the journal knows shows without being added by hand (GET /v1/agents).
      browser.eval("localStorage.removeItem('otl.console.agents'); true");
      browser.navigate(base + "/console/#/agents");
      browser.waitFor("document.querySelector('[data-agent=\"" + AGENT + "\"] [data-field=\"stable\"]')", WAIT);

      // 3. Model versions: states, ratios, the timeline and the rollback explanation.
      browser.navigate(base + "/console/#/models/" + AGENT);
      browser.waitFor("document.querySelector('.rollback [data-field=\"rollback-reason\"]')", WAIT);
      String models = browser.text();
      assertEquals("manual rollback: " + ROLLBACK_REASON,
          browser.eval("document.querySelector('.rollback[data-version=\"v3\"] [data-field=\"rollback-reason\"]').innerText").asText());
      assertEquals("RETIRED", state(browser, "v1"));
      assertEquals("STABLE", state(browser, "v2"));
      assertEquals("ROLLED_BACK", state(browser, "v3"));
      assertEquals("CANARY", state(browser, "v4"));
      assertEquals("5%", browser.eval("document.querySelector('tr[data-version=\"v4\"] [data-field=\"ratio\"]').innerText").asText());
      assertEquals("95%", browser.eval("document.querySelector('tr[data-version=\"v2\"] [data-field=\"ratio\"]').innerText").asText());
      assertTrue(browser.eval("document.querySelectorAll('.timeline-chart .segment').length").asInt() >= 10,
          "state timeline segments");
      assertTrue(browser.eval("document.querySelectorAll('.timeline-chart .state-rolled_back').length").asInt() == 1);
      assertStatesHaveDistinctColoursAndALegend(browser);
      // Canary v4 vs stable v2: one chart per evaluation metric (no outcomes yet: said so).
      assertEquals(3, browser.eval("document.querySelectorAll('.rollout[data-candidate=\"v4\"] figure[data-metric]').length").asInt());
      assertTrue(models.contains("no observations yet"), models);
      browser.screenshot("node-03-models");

      // 4. A session as a conversation: desensitized, tool calls folded, feedback and reward.
      browser.navigate(base + "/console/#/sessions/s-checkout-1");
      browser.waitFor("document.querySelector('.conversation')", WAIT);
      String session = browser.text();
      assertTrue(session.contains("call me on [PHONE] or mail [EMAIL]"), session);
      assertTrue(!session.contains("13812345678") && !session.contains("ann@example.com"), "PII on screen");
      assertTrue(session.contains("Your parcel A-1009 is in transit"), session);
      assertEquals(1, browser.eval("document.querySelectorAll('details.tool:not([open])').length").asInt(), "tool call folded");
      assertTrue(session.contains("lookup_order"), session);
      assertTrue(session.contains("RATING 5 / 5") && session.contains("ADOPTED"), session);
      // The rating names the response it rates (per-turn feedback, msgId); the list did not show it.
      String rated = browser.eval("document.querySelector('[data-field=\"feedback-msg\"]').innerText").asText();
      assertTrue(rated.contains("for response resp-42"), rated);
      assertEquals(node(api.get("/v1/sessions/s-checkout-1").json().path("reward")),
          browser.eval("document.querySelector('[data-field=\"reward\"]').innerText").asText());
      assertEquals("COMPLETED", browser.eval("document.querySelector('[data-field=\"status\"]').innerText").asText());
      browser.eval("document.querySelector('details.tool').open = true; true");
      browser.waitFor("document.body.innerText.includes('tomorrow')", WAIT);
      browser.screenshot("node-04-session");

      browser.navigate(base + "/console/#/sessions/s-checkout-2");
      browser.waitFor("document.body.innerText.includes('cancel_subscription')", WAIT);
      String failed = browser.text();
      assertTrue(failed.contains("cancel_subscription") && failed.contains("FAILED") && failed.contains("THUMBS_DOWN"), failed);
      // A step without index or thought (the AgentScope hook's error step) read "reasoning step -1: error".
      assertEquals("reasoning step (no index): error (no thought)",
          browser.eval("document.querySelector('details.reasoning summary').innerText").asText().trim());

      // 5. An unknown session and the 404 message; the jobs page before any job.
      browser.navigate(base + "/console/#/sessions/s-nobody");
      browser.waitFor("document.body.innerText.includes('Not found (404)')", WAIT);
      browser.navigate(base + "/console/#/jobs");
      browser.waitFor("document.body.innerText.includes('No training jobs yet')", WAIT);

      // 6. A wrong token: 401 says the token was refused.
      browser.eval("document.getElementById('token-input').value = 'wrong';"
          + "document.getElementById('token-save').click(); true");
      browser.navigate(base + "/console/#/models/" + AGENT);
      browser.waitFor("document.body.innerText.includes('the token in the Token box was refused')", WAIT);
      // With no agent remembered in this browser, the refused agent list is not "No agents yet".
      browser.eval("localStorage.clear(); true");
      browser.navigate(base + "/console/#/agents");
      browser.waitFor("document.querySelector('#view h1')?.textContent === 'Agents'"
          + " && document.querySelector('#view').innerText.includes('the token in the Token box was refused')", WAIT);
      String refused = browser.eval("document.querySelector('#view').innerText").asText();
      assertFalse(refused.contains("No agents yet"), refused);

      assertTrue(browser.pageErrors.isEmpty(), "page errors: " + browser.pageErrors);
    }
  }

  /** The console's rendering of a reward (at most 3 decimals, trailing zeros dropped). */
  private static String node(JsonNode reward) {
    return String.valueOf(Double.valueOf(String.format(java.util.Locale.ROOT, "%.3f", reward.asDouble())))
        .replaceAll("\\.0$", "");
  }

  /**
   * Every version state has a colour of its own, named in a legend that says what the state means,
   * and the versions table shows a state in its legend's colour (the new-user trial could not tell
   * CANARY from RAMP, nor RETIRED from PAUSED, and the legend had no DEPLOYING or NO_EVIDENCE colour).
   */
  private static void assertStatesHaveDistinctColoursAndALegend(HeadlessChromium browser) throws Exception {
    JsonNode legend = new com.fasterxml.jackson.databind.ObjectMapper().readTree(browser.eval("JSON.stringify([...document.querySelectorAll("
        + "'[data-field=\"state-legend\"] .legend-item')].map(i => ({state: i.dataset.state, text: i.innerText,"
        + " colour: getComputedStyle(i.querySelector('.swatch')).backgroundColor})))").asText());
    java.util.Set<String> states = new java.util.HashSet<>();
    java.util.Map<String, String> colours = new java.util.HashMap<>();
    for (JsonNode item : legend) {
      states.add(item.get("state").asText());
      assertTrue(item.get("text").asText().length() > item.get("state").asText().length() + 10,
          "the legend explains " + item);
      String previous = colours.put(item.get("colour").asText(), item.get("state").asText());
      assertTrue(previous == null, item.get("state").asText() + " has the colour of " + previous + ": " + legend);
    }
    assertEquals(java.util.Set.of("REGISTERED", "EVALUATING", "READY", "NO_EVIDENCE", "REJECTED", "DEPLOYING",
        "DEPLOY_FAILED", "CANARY", "RAMP", "PAUSED", "STABLE", "RETIRED", "ROLLED_BACK"), states);
    for (String version : new String[] {"v1", "v2", "v3", "v4"}) {
      String colour = browser.eval("getComputedStyle(document.querySelector('tr[data-version=\"" + version
          + "\"] [data-field=\"state\"] .badge')).backgroundColor").asText();
      assertEquals(state(browser, version), colours.get(colour), version + "'s badge is in its legend colour");
    }
  }

  private static String state(HeadlessChromium browser, String version) throws Exception {
    return browser.eval("document.querySelector('tr[data-version=\"" + version + "\"] [data-field=\"state\"]').innerText")
        .asText().trim();
  }
}
