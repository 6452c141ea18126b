package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Every session, feedback and model route over real HTTP on loopback, with its error codes. */
class SessionAndModelRoutesTest {
  private static TrainingNode node;
  private static Http http;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-http-")), true));
    http = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  private static void assertError(Http.Response r, int status, String code) {
    assertEquals(status, r.status(), r.body());
    JsonNode body = r.json();
    assertEquals(code, body.path("error").asText(), r.body());
    assertFalse(body.path("message").asText().isBlank(), r.body());
  }

  @Test
  void postsEventsReadsTheTrajectoryAndDeduplicatesRetries() {
    String body = """
        {"agentId":"support-bot","events":[
          {"type":"start","eventId":"e0","modelVersion":"v1","metadata":{"channel":"web"}},
          {"type":"message","eventId":"e1","role":"user","content":"mail me at a@b.cn"},
          {"type":"tool_call","eventId":"e2","callId":"c1","toolName":"lookup","input":{"q":1},"output":{"ok":true},"success":true,"latencyMs":12},
          {"type":"reasoning","eventId":"e3","index":0,"thought":"t","action":"a","observation":"o"},
          {"type":"message","eventId":"e4","role":"assistant","content":"done","msgId":"chatcmpl-1","latencyMs":700,"at":"2026-11-20T02:00:00Z"},
          {"type":"feedback","eventId":"e5","kind":"THUMBS_UP","feedbackId":"f1"},
          {"type":"result","eventId":"e6","status":"SUCCESS","detail":"ok"}]}""";
    Http.Response first = http.post("/v1/sessions/s-http-1/events", body);
    assertEquals(202, first.status(), first.body());
    assertEquals(7, first.json().get("accepted").asInt());
    assertEquals(0, first.json().get("duplicates").asInt());
    assertTrue(first.json().get("sampled").asBoolean());
    Http.Response retry = http.post("/v1/sessions/s-http-1/events", body);
    assertEquals(202, retry.status());
    assertEquals(0, retry.json().get("accepted").asInt());
    assertEquals(7, retry.json().get("duplicates").asInt());

    JsonNode s = http.get("/v1/sessions/s-http-1").json();
    assertEquals("s-http-1", s.get("sessionId").asText());
    assertEquals("support-bot", s.get("agentId").asText());
    assertEquals("COMPLETED", s.get("status").asText());
    assertEquals("v1", s.get("modelVersion").asText());
    assertEquals(2, s.get("messages").size());
    assertEquals("mail me at [EMAIL]", s.get("messages").get(0).get("content").asText());
    assertEquals("2026-11-20T02:00:00Z", s.get("messages").get(1).get("at").asText());
    assertEquals(1, s.get("toolCalls").size());
    assertEquals(1, s.get("steps").size());
    assertEquals(1, s.get("feedback").size());
    assertEquals("SUCCESS", s.get("result").get("status").asText());
    assertEquals(1.0, s.get("reward").asDouble(), 1e-9);
    assertEquals(1.0, s.get("qualityScore").asDouble(), 1e-9);
  }

  @Test
  void feedbackRoutesRecordAndRevise() {
    http.post("/v1/sessions/s-fb/events", """
        {"agentId":"a1","events":[{"type":"message","role":"user","content":"hi"},
         {"type":"result","status":"SUCCESS"}]}""");
    Http.Response fb = http.post("/v1/sessions/s-fb/feedback", "{\"kind\":\"THUMBS_DOWN\",\"feedbackId\":\"x1\"}");
    assertEquals(202, fb.status(), fb.body());
    assertEquals(0.0, http.get("/v1/sessions/s-fb").json().get("reward").asDouble(), 1e-9);
    Http.Response rate = http.post("/v1/feedback/rate?sessionId=s-fb&score=5", null);
    assertEquals(200, rate.status(), rate.body());
    Http.Response thumbs = http.post("/v1/feedback/thumbs?sessionId=s-fb&helpful=true", null);
    assertEquals(200, thumbs.status(), thumbs.body());
    assertEquals(3, http.get("/v1/sessions/s-fb").json().get("feedback").size());

    assertError(http.post("/v1/feedback/rate?sessionId=s-fb&score=6", null), 400, "invalid_request");
    assertError(http.post("/v1/feedback/rate?sessionId=s-fb&score=abc", null), 400, "invalid_request");
    assertError(http.post("/v1/feedback/rate?score=3", null), 400, "invalid_request");
    assertError(http.post("/v1/feedback/thumbs?sessionId=s-fb&helpful=maybe", null), 400, "invalid_request");
    assertError(http.post("/v1/feedback/thumbs?sessionId=nobody-here&helpful=true", null), 404, "not_found");
    assertError(http.post("/v1/sessions/s-fb/feedback", "{\"kind\":\"RATING\",\"value\":9}"), 400, "invalid_request");
    assertError(http.post("/v1/sessions/s-fb/feedback", "{\"kind\":\"LIKE\"}"), 400, "invalid_request");
  }

  @Test
  void badInputGetsA4xxNamingTheFieldAndStoresNothing() {
    assertError(http.post("/v1/sessions/s-bad/events", "{not json"), 400, "invalid_json");
    assertError(http.post("/v1/sessions/s-bad/events", "[]"), 400, "invalid_request");
    assertError(http.post("/v1/sessions/s-bad/events", "{\"agentId\":\"a\",\"events\":{}}"), 400, "invalid_request");
    Http.Response role = http.post("/v1/sessions/s-bad/events",
        "{\"agentId\":\"a\",\"events\":[{\"type\":\"message\",\"role\":\"robot\",\"content\":\"x\"}]}");
    assertError(role, 400, "invalid_request");
    assertTrue(role.json().get("message").asText().contains("events[0].role"), role.body());
    Http.Response typo = http.post("/v1/sessions/s-bad/events",
        "{\"agentId\":\"a\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"contnet\":\"x\"}]}");
    assertError(typo, 400, "invalid_request");
    assertTrue(typo.json().get("message").asText().contains("contnet"));
    assertError(http.post("/v1/sessions/s-bad/events",
        "{\"agentId\":\"a\",\"events\":[{\"type\":\"teleport\"}]}"), 400, "invalid_request");
    assertError(http.post("/v1/sessions/s-bad/events",
        "{\"agentId\":\"a\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":5}]}"), 400, "invalid_request");
    assertError(http.post("/v1/sessions/s-bad/events",
        "{\"agentId\":\"a b\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\"}]}"), 400, "invalid_request");
    assertError(http.post("/v1/sessions/..%2F..%2Fetc/events",
        "{\"agentId\":\"a\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\"}]}"), 400, "invalid_request");
    assertError(http.postBytes("/v1/sessions/s-bad/events", new byte[] {'{', '"', (byte) 0xC3, (byte) 0x28, '"', '}'}),
        400, "invalid_json");
    assertError(http.post("/v1/sessions/s-bad/events",
        "{\"agentId\":\"a\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"a\\u0000b\"}]}"),
        400, "invalid_request");
    StringBuilder many = new StringBuilder("{\"agentId\":\"a\",\"events\":[");
    for (int i = 0; i < 10_000; i++) many.append(i == 0 ? "" : ",").append("{\"type\":\"message\",\"role\":\"user\",\"content\":\"m\"}");
    assertError(http.post("/v1/sessions/s-bad/events", many.append("]}").toString()), 413, "too_many_events");
    String huge = "{\"agentId\":\"a\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\""
        + "x".repeat(2 * 1024 * 1024) + "\"}]}";
    assertError(http.post("/v1/sessions/s-bad/events", huge), 413, "payload_too_large");
    String longText = "{\"agentId\":\"a\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\""
        + "x".repeat(200 * 1024) + "\"}]}";
    assertError(http.post("/v1/sessions/s-bad/events", longText), 400, "invalid_request");
    assertError(http.get("/v1/sessions/s-bad"), 404, "not_found");
    assertError(http.get("/v1/no-such-route"), 404, "not_found");
    assertError(http.send("DELETE", "/v1/sessions/s-bad", null), 405, "method_not_allowed");
  }

  /**
   * A hand-registered version's endpoint is where the gateway sends its traffic (serving.backend =
   * static): text that is no URL was stored with a 201 and failed every call later.
   */
  @Test
  void aVersionWhoseEndpointIsNoUrlIsRefusedAndNothingIsRegistered() {
    for (String endpoint : java.util.List.of("not a url", "x", "vllm:8000", "http://", "http:///v1", "//host/v1",
        "ftp://host/v1", "admin:s3cret-key@vllm",
        // Ports the gateway's client refuses: 99999 was stored, and every call then answered 500.
        "http://127.0.0.1:99999/v1", "http://vllm:65536/v1", "http://vllm:0/v1")) {
      Http.Response r = http.post("/v1/models/url-agent/versions",
          "{\"version\":\"v1\",\"artifact\":\"file:///m/v1\",\"endpoint\":\"" + endpoint + "\"}");
      assertError(r, 400, "invalid_request");
      assertTrue(r.json().get("message").asText().startsWith("endpoint is not an absolute http(s) URL"), r.body());
      // The refusal says what is allowed: "http://127.0.0.1:99999/v1" is absolute and http, its port is not.
      assertTrue(r.json().get("message").asText().contains("a port from 1 to 65535"), r.body());
      assertFalse(r.body().contains("s3cret"), "credentials in an endpoint are not echoed: " + r.body());
    }
    assertError(http.get("/v1/models/url-agent"), 404, "not_found");
    Http.Response ok = http.post("/v1/models/url-agent/versions",
        "{\"version\":\"v1\",\"artifact\":\"file:///m/v1\",\"endpoint\":\"https://vllm.internal:8000/v1\"}");
    assertEquals(201, ok.status(), ok.body());
  }

  /**
   * An endpoint with user:password@ was stored (201) and answered as registered by GET /v1/models and
   * …/route (open to agents by default), while the gateway's client never sent the credentials upstream.
   */
  @Test
  void aVersionWhoseEndpointCarriesCredentialsIsRefusedUnechoed() {
    for (String endpoint : java.util.List.of("http://admin:s3cret-key@vllm:8000/v1", "https://s3cret-token@vllm/v1",
        "http://admin:@vllm/v1")) {
      Http.Response r = http.post("/v1/models/cred-agent/versions",
          "{\"version\":\"v1\",\"artifact\":\"my-org/lora\",\"servedModel\":\"m\",\"endpoint\":\"" + endpoint + "\"}");
      assertError(r, 400, "invalid_request");
      assertTrue(r.json().get("message").asText().startsWith("endpoint must not carry credentials (user:password@…)"),
          r.body());
      assertTrue(r.json().get("message").asText().contains("gateway.upstream-api-key"), r.body());
      assertFalse(r.body().contains("s3cret") || r.body().contains("admin"), r.body());
    }
    assertError(http.get("/v1/models/cred-agent"), 404, "not_found");
  }

  /**
   * Trial t12: an endpoint with a query ({@code http://vllm/v1?api_key=…}) was stored (201), every call of
   * the version then went to {@code /v1?api_key=…/chat/completions} (the server's 404), and the key was
   * answered by GET /v1/models and …/route.
   */
  @Test
  void aVersionWhoseEndpointHasAQueryOrFragmentIsRefusedUnechoed() {
    for (String endpoint : java.util.List.of("http://vllm:8000/v1?api_key=s3cret-key", "https://vllm/v1?",
        "http://vllm:8000/v1#s3cret")) {
      Http.Response r = http.post("/v1/models/query-agent/versions",
          "{\"version\":\"v1\",\"artifact\":\"my-org/lora\",\"servedModel\":\"m\",\"endpoint\":\"" + endpoint + "\"}");
      assertError(r, 400, "invalid_request");
      assertTrue(r.json().get("message").asText().startsWith("endpoint must not have a query or fragment"), r.body());
      assertTrue(r.json().get("message").asText().contains("gateway.upstream-api-key"), r.body());
      assertFalse(r.body().contains("s3cret"), r.body());
    }
    assertError(http.get("/v1/models/query-agent"), 404, "not_found");
  }

  /** A promote, pause or resume carrying fields is refused, not performed without what it asked. */
  @Test
  void aTransitionThatTakesNoBodyRefusesOneAndChangesNothing() throws Exception {
    Http.Response reg = http.post("/v1/models/body-agent/versions",
        "{\"version\":\"v1\",\"artifact\":\"file:///m/v1\",\"endpoint\":\"http://127.0.0.1:9/v1\"}");
    assertEquals(201, reg.status(), reg.body());
    String before = settled("body-agent");
    for (String op : java.util.List.of("promote", "pause", "resume")) {
      Http.Response r = http.post("/v1/models/body-agent/versions/v1/" + op, "{\"reason\":\"ship it\"}");
      assertError(r, 400, "invalid_request");
      assertTrue(r.json().get("message").asText().startsWith("a " + op + " takes no body"), r.body());
    }
    JsonNode after = http.get("/v1/models/body-agent").json();
    assertFalse(after.toString().contains("ship it"), "nothing of the body was stored: " + after);
    assertEquals(new com.fasterxml.jackson.databind.ObjectMapper().readTree(before).findValue("versions").size(),
        after.get("versions").size(), after.toString());
  }

  /**
   * docs/api.md: a pause or resume with nothing to do answers 202 with the state as it is and why
   * (a retry is safe); the same verbs on a version not in rollout, and a rollback of the stable
   * during a rollout, are 409s naming the state. None of them writes anything.
   */
  @Test
  void pauseAndResumeWithNothingToDoAnswerTheStateAndWrongStatesAre409s() {
    assertEquals(201, http.post("/v1/models/agent-pr/versions",
        "{\"version\":\"v1\",\"artifact\":\"hf:org/v1\",\"endpoint\":\"http://infer:8000/v1\"}").status());
    assertEquals(201, http.post("/v1/models/agent-pr/versions",
        "{\"version\":\"v2\",\"artifact\":\"hf:org/v2\",\"endpoint\":\"http://infer:8001/v1\"}").status());
    assertEquals("CANARY", versionState("agent-pr", "v2"));
    String before = http.get("/v1/models/agent-pr").body();

    Http.Response notPaused = http.post("/v1/models/agent-pr/versions/v2/resume", null);
    assertEquals(202, notPaused.status(), notPaused.body());
    assertEquals("CANARY", notPaused.json().get("state").asText(), notPaused.body());
    assertEquals("[\"not paused\"]", notPaused.json().get("reasons").toString(), notPaused.body());
    for (String op : java.util.List.of("pause", "resume", "promote")) {
      Http.Response r = http.post("/v1/models/agent-pr/versions/v1/" + op, null);
      assertError(r, 409, "invalid_transition");
      assertTrue(r.json().get("message").asText().contains("STABLE"), r.body());
    }
    Http.Response stableRollback = http.post("/v1/models/agent-pr/versions/v1/rollback", null);
    assertError(stableRollback, 409, "invalid_transition");
    assertTrue(stableRollback.json().get("message").asText().contains("v2 is in rollout"), stableRollback.body());
    assertEquals(before, http.get("/v1/models/agent-pr").body(), "nothing changed");

    Http.Response paused = http.post("/v1/models/agent-pr/versions/v2/pause", null);
    assertEquals(202, paused.status(), paused.body());
    assertEquals("PAUSED", paused.json().get("state").asText(), paused.body());
    Http.Response again = http.post("/v1/models/agent-pr/versions/v2/pause", null);
    assertEquals(202, again.status(), again.body());
    assertEquals("[\"already paused\"]", again.json().get("reasons").toString(), again.body());
    assertEquals("PAUSED", versionState("agent-pr", "v2"));
  }

  /** The agent's models once no version is DEPLOYING (the deployment's outcome is not this test's subject). */
  private static String settled(String agent) {
    for (int i = 0; i < 300; i++) {
      String body = http.get("/v1/models/" + agent).body();
      if (!body.contains("\"DEPLOYING\"")) return body;
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
    throw new AssertionError("a version of " + agent + " stayed DEPLOYING: " + http.get("/v1/models/" + agent).body());
  }

  @Test
  void anEventNamingAnotherSessionOrAgentIsRefusedNotStoredHere() {
    String path = "/v1/sessions/s-http-mixed/events";
    assertError(http.post(path, """
        {"agentId":"support-bot","events":[
          {"type":"message","eventId":"x1","role":"user","content":"hi"},
          {"type":"message","eventId":"x2","role":"user","content":"for B","sessionId":"s-http-other"}]}"""),
        400, "invalid_request");
    assertError(http.post(path, """
        {"agentId":"support-bot","events":[
          {"type":"message","eventId":"x3","role":"user","content":"hi","agentId":"billing-bot"}]}"""),
        400, "invalid_request");
    assertEquals(404, http.get("/v1/sessions/s-http-mixed").status(), "a refused batch stored something");
    assertEquals(404, http.get("/v1/sessions/s-http-other").status());
    // The Kafka record shape is accepted as is when it names this session and agent.
    Http.Response same = http.post(path, """
        {"agentId":"support-bot","events":[
          {"type":"message","eventId":"x4","role":"user","content":"hi","sessionId":"s-http-mixed","agentId":"support-bot"}]}""");
    assertEquals(202, same.status(), same.body());
    assertEquals(1, same.json().get("accepted").asInt());
  }

  @Test
  void aSessionOfOneAgentRefusesAnotherAndCompletedSessionsRefuseNewTurns() {
    http.post("/v1/sessions/s-owner/events", "{\"agentId\":\"a1\",\"events\":[{\"type\":\"result\",\"status\":\"FAILURE\"}]}");
    assertError(http.post("/v1/sessions/s-owner/events",
        "{\"agentId\":\"a2\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\"}]}"), 409, "conflict");
    assertError(http.post("/v1/sessions/s-owner/events",
        "{\"agentId\":\"a1\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\"}]}"), 409, "conflict");
  }

  @Test
  void modelVersionsCanBeRegisteredPromotedRoutedAndRolledBack() {
    assertError(http.get("/v1/models/agent-m"), 404, "not_found");
    assertError(http.get("/v1/models/agent-m/route?sessionId=s1"), 404, "not_found");
    Http.Response reg = http.post("/v1/models/agent-m/versions",
        "{\"version\":\"v1\",\"artifact\":\"file:///models/v1\",\"endpoint\":\"http://infer:8000/v1\"}");
    assertEquals(201, reg.status(), reg.body());
    assertError(http.post("/v1/models/agent-m/versions", "{\"version\":\"v1\",\"artifact\":\"x\",\"endpoint\":\"http://e\"}"), 409, "conflict");
    assertError(http.post("/v1/models/agent-m/versions", "{\"artifact\":\"x\"}"), 400, "invalid_request");
    assertError(http.post("/v1/models/agent-m/versions", "{\"version\":\"v9\"}"), 400, "invalid_request");
    assertError(http.post("/v1/models/agent-m/versions", "{\"version\":\"v9\",\"artifact\":\"x\"}"), 400,
        "invalid_request");

    JsonNode models = http.get("/v1/models/agent-m").json();
    assertEquals("agent-m", models.get("agentId").asText());
    assertEquals(1, models.get("versions").size());
    JsonNode v1 = models.get("versions").get(0);
    for (String field : new String[] {"version", "state", "ratio", "artifact", "endpoint", "sourceJobId", "metrics", "history"}) {
      assertTrue(v1.has(field), "version view lacks " + field + ": " + v1);
    }

    // No base model on this node: the first version registered by hand is promoted directly.
    assertEquals("v1", models.get("stable").asText(), models.toString());
    assertEquals("STABLE", v1.get("state").asText(), v1.toString());
    Http.Response reg2 = http.post("/v1/models/agent-m/versions",
        "{\"version\":\"v2\",\"artifact\":\"file:///models/v2\",\"endpoint\":\"http://infer:8001/v1\"}");
    assertEquals(201, reg2.status(), reg2.body());
    // auto-deploy: the second version starts its canary at canary-ratio against v1.
    assertEquals("CANARY", reg2.json().get("state").asText(), reg2.body());
    assertEquals(0.05, reg2.json().get("ratio").asDouble(), 1e-9, reg2.body());

    // A manual promote of the canary skips the remaining steps: v2 is STABLE, v1 retained for a rollback.
    Http.Response promote = http.post("/v1/models/agent-m/versions/v2/promote", null);
    assertEquals(202, promote.status(), promote.body());
    assertEquals("STABLE", promote.json().get("state").asText(), promote.body());
    assertEquals(1.0, promote.json().get("ratio").asDouble(), 1e-9, promote.body());
    assertEquals("STABLE", versionState("agent-m", "v2"));
    assertEquals("v2", http.get("/v1/models/agent-m").json().get("stable").asText());
    Http.Response route = http.get("/v1/models/agent-m/route?sessionId=s-42");
    assertEquals(200, route.status(), route.body());
    assertEquals("s-42", route.json().get("sessionId").asText());
    assertEquals("v2", route.json().get("version").asText(), route.body());

    // The rollback the test is named for: v2 leaves, the retained v1 is stable again and routes get it.
    Http.Response rollback = http.post("/v1/models/agent-m/versions/v2/rollback", "{\"reason\":\"worse answers\"}");
    assertEquals(202, rollback.status(), rollback.body());
    assertEquals("ROLLED_BACK", versionState("agent-m", "v2"));
    assertEquals("STABLE", versionState("agent-m", "v1"));
    assertEquals("v1", http.get("/v1/models/agent-m").json().get("stable").asText());
    assertEquals("v1", http.get("/v1/models/agent-m/route?sessionId=s-42").json().get("version").asText());
    // A rolled-back version cannot be promoted, nor rolled back twice; the refusal names the state.
    Http.Response refused = http.post("/v1/models/agent-m/versions/v2/promote", null);
    assertError(refused, 409, "invalid_transition");
    assertTrue(refused.json().get("message").asText().contains("ROLLED_BACK"), refused.body());
    assertError(http.post("/v1/models/agent-m/versions/v2/rollback", null), 409, "invalid_transition");
    assertEquals("v1", http.get("/v1/models/agent-m").json().get("stable").asText());

    assertError(http.post("/v1/models/agent-m/versions/v404/promote", null), 404, "not_found");
    assertError(http.get("/v1/models/agent-m/route"), 400, "invalid_request");
    assertError(http.post("/v1/models/agent-m/versions/v1/rollback", "{\"reason\":5}"), 400, "invalid_request");
  }

  /**
   * A compressed body is refused with 415 naming the encoding, and nothing is stored: read as JSON,
   * gzip bytes were a 400 "Illegal character (CTRL-CHAR, code 31)", which sent the client looking
   * for a bug in its JSON.
   */
  @Test
  void aCompressedBodyIsRefusedWith415AndStoresNothing() throws Exception {
    byte[] json = "{\"agentId\":\"a-gz\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\"}]}"
        .getBytes(java.nio.charset.StandardCharsets.UTF_8);
    var zipped = new java.io.ByteArrayOutputStream();
    try (var gz = new java.util.zip.GZIPOutputStream(zipped)) {
      gz.write(json);
    }
    Http.Response r = http.postWithHeaders("/v1/sessions/s-gz/events", zipped.toByteArray(), "Content-Encoding", "gzip");
    assertError(r, 415, "unsupported_media_type");
    assertTrue(r.json().get("message").asText().contains("Content-Encoding gzip"), r.body());
    assertError(http.postWithHeaders("/v1/models/a-gz/versions/v1/rollback", "{}".getBytes(), "Content-Encoding",
        "deflate"), 415, "unsupported_media_type");
    assertError(http.get("/v1/sessions/s-gz"), 404, "not_found");
    // Identity is no encoding at all.
    assertEquals(202, http.postWithHeaders("/v1/sessions/s-gz/events", json, "Content-Encoding", "identity").status());
  }

  /**
   * Card numbers, IBANs and API keys (a trial found them stored raw) are replaced by default in
   * messages, tool input and output and start metadata; a card-shaped session id is refused. Keys
   * are assembled at run time so that no token-shaped literal sits in the source.
   */
  @Test
  void cardsIbansAndKeysAreStoredAsPlaceholdersByDefault() {
    String key = "sk-" + "proj-" + "Ab3dEf7hIjK1mNoPqR5tUvWxYz_0123456789-AbCdEfGhIjKl";
    String aws = "AKIA" + "IOSFODNN7EXAMPLE";
    String body = """
        {"agentId":"pay-bot","events":[
          {"type":"start","eventId":"p0","metadata":{"card":"5555-5555-5555-4444"}},
          {"type":"message","eventId":"p1","role":"user","content":"pay with 4111 1111 1111 1111 from DE89 3704 0044 0532 0130 00"},
          {"type":"tool_call","eventId":"p2","callId":"c1","toolName":"charge","input":{"card":4111111111111111,"auth":"Bearer %s"},"output":{"aws":"%s"},"success":true},
          {"type":"message","eventId":"p3","role":"assistant","content":"order 1733126400000 placed, card 4111 1111 1111 1112 was declined"},
          {"type":"result","eventId":"p4","status":"SUCCESS"}]}""".formatted(key, aws);
    Http.Response posted = http.post("/v1/sessions/s-http-pay/events", body);
    assertEquals(202, posted.status(), posted.body());

    Http.Response got = http.get("/v1/sessions/s-http-pay");
    assertEquals(200, got.status(), got.body());
    String stored = got.body();
    for (String raw : new String[] {"4111 1111 1111 1111", "4111111111111111", "5555-5555-5555-4444", "DE89", key, aws}) {
      assertFalse(stored.contains(raw), raw + " in " + stored);
    }
    JsonNode s = got.json();
    assertEquals("pay with [BANK_CARD] from [IBAN]", s.get("messages").get(0).get("content").asText());
    // Look-alikes stay: a millisecond timestamp and a number whose Luhn digit is wrong.
    assertEquals("order 1733126400000 placed, card 4111 1111 1111 1112 was declined",
        s.get("messages").get(1).get("content").asText());
    assertTrue(stored.contains("\"card\":\"[BANK_CARD]\""), stored);
    assertTrue(stored.contains("Bearer [SECRET]"), stored);
    assertTrue(stored.contains("\"aws\":\"[SECRET]\""), stored);

    Http.Response refused = http.post("/v1/sessions/order-4111111111111111/events",
        "{\"agentId\":\"pay-bot\",\"events\":[{\"type\":\"start\"}]}");
    assertError(refused, 400, "invalid_request");
    assertTrue(refused.json().get("message").asText().contains("a bank card number"), refused.body());
    assertFalse(refused.body().contains("4111111111111111"), refused.body());
  }

  /** A rollback's reason is free text a client writes into the journal: PII in it is stored desensitized. */
  @Test
  void aRollbackReasonIsStoredDesensitized() {
    assertEquals(201, http.post("/v1/models/agent-pii/versions",
        "{\"version\":\"v1\",\"artifact\":\"file:///m/v1\",\"endpoint\":\"http://infer:8000/v1\"}").status());
    assertEquals(201, http.post("/v1/models/agent-pii/versions",
        "{\"version\":\"v2\",\"artifact\":\"file:///m/v2\",\"endpoint\":\"http://infer:8001/v1\"}").status());
    Http.Response rollback = http.post("/v1/models/agent-pii/versions/v2/rollback",
        "{\"reason\":\"jane@example.com says so, call 13812345678\"}");
    assertEquals(202, rollback.status(), rollback.body());
    String view = http.get("/v1/models/agent-pii").body();
    String audit = http.get("/v1/audit/model/agent-pii").body();
    for (String stored : new String[] {view, audit}) {
      assertFalse(stored.contains("jane@example.com") || stored.contains("13812345678"), stored);
      assertTrue(stored.contains("manual rollback: [EMAIL] says so, call [PHONE]"), stored);
    }
  }

  /** A rollback without a reason says "manual rollback" once (it said "manual rollback: manual rollback"). */
  @Test
  void aRollbackWithoutReasonIsRecordedAsAManualRollback() {
    for (String[] c : new String[][] {{"agent-noreason", ""}, {"agent-blankreason", "{\"reason\":\" \"}"}}) {
      assertEquals(201, http.post("/v1/models/" + c[0] + "/versions",
          "{\"version\":\"v1\",\"artifact\":\"file:///m/v1\",\"endpoint\":\"http://infer:8000/v1\"}").status());
      assertEquals(201, http.post("/v1/models/" + c[0] + "/versions",
          "{\"version\":\"v2\",\"artifact\":\"file:///m/v2\",\"endpoint\":\"http://infer:8001/v1\"}").status());
      Http.Response rollback = http.post("/v1/models/" + c[0] + "/versions/v2/rollback", c[1]);
      assertEquals(202, rollback.status(), rollback.body());
      String reason = null;
      for (JsonNode v : http.get("/v1/models/" + c[0]).json().get("versions")) {
        if (v.get("version").asText().equals("v2")) {
          JsonNode history = v.get("history");
          reason = history.get(history.size() - 1).get("reason").asText();
        }
      }
      assertEquals("manual rollback", reason, c[0]);
    }
  }

  private static String versionState(String agent, String version) {
    for (JsonNode v : http.get("/v1/models/" + agent).json().get("versions")) {
      if (v.get("version").asText().equals(version)) return v.get("state").asText();
    }
    throw new AssertionError(version + " is not listed for " + agent);
  }

  @Test
  void healthAndMetricsAnswer() throws Exception {
    assertEquals(200, http.get("/health/live").status());
    Http.Response ready = http.get("/health/ready");
    assertEquals(200, ready.status(), ready.body());
    http.post("/v1/sessions/s-metrics/events", "{\"agentId\":\"a\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\"}]}");
    Http.Response metrics = http.get("/metrics");
    assertEquals(200, metrics.status());
    assertTrue(metrics.body().contains("otl_events_accepted_total"), metrics.body());
    assertTrue(metrics.body().contains("otl_http_request_duration_seconds_bucket{route=\"POST /v1/sessions/{id}/events\""),
        metrics.body());
    assertTrue(metrics.body().contains("otl_journal_write_seconds_count"), metrics.body());
    long deadline = System.nanoTime() + 20_000_000_000L;
    String body = metrics.body();
    while (!body.matches("(?s).*otl_sessions_active [1-9].*") && System.nanoTime() < deadline) {
      Thread.sleep(200);
      body = http.get("/metrics").body();
    }
    assertTrue(body.matches("(?s).*otl_sessions_active [1-9].*"), body);
  }

  /**
   * Artifact and endpoint are journaled as sent (the version-registered event): a value holding
   * personal data is refused with 400 naming the field, the value not repeated, nothing stored; the
   * rule of PUT /v1/training/{agentId}/policy. Ordinary URIs with digits still register.
   */
  @Test
  void anArtifactOrEndpointThatHoldsPersonalDataIsRefusedAndNotJournaled() {
    record Case(String version, String artifact, String endpoint, String field, String secret) {}
    for (Case c : new Case[] {
        // A key as the version was registered and logged at every transition (trial t45).
        new Case("sk-proj-abcdefghijklmnopqrstuvwx1234", "s3://m/v2", "http://infer:8000/v1", "version", "sk-proj"),
        new Case("v2", "s3://models/jane.doe@example.com/v2", "http://infer:8000/v1", "artifact", "jane.doe"),
        new Case("v2", "file:///models/13812345678/v2", "http://infer:8000/v1", "artifact", "13812345678"),
        new Case("v2", "s3://m/v2", "http://infer:8000/owner-13812345678/v1", "endpoint", "13812345678")}) {
      Http.Response r = http.post("/v1/models/agent-reg-pii/versions",
          "{\"version\":\"" + c.version() + "\",\"artifact\":\"" + c.artifact() + "\",\"endpoint\":\"" + c.endpoint() + "\"}");
      assertError(r, 400, "invalid_request");
      assertTrue(r.json().get("message").asText().startsWith(c.field() + ": looks like personal data"), r.body());
      assertFalse(r.body().contains(c.secret()), r.body());
    }
    assertError(http.get("/v1/models/agent-reg-pii"), 404, "not_found");
    Http.Response ok = http.post("/v1/models/agent-reg-pii/versions", "{\"version\":\"v2\","
        + "\"artifact\":\"s3://bucket/run-20261201-0930/ckpt-1200\",\"endpoint\":\"http://10.0.12.7:8000/v1\"}");
    assertEquals(201, ok.status(), ok.body());
  }

  /** The API and the entity apply one version rule: what one accepts the other accepts (issue #17 item 5). */
  @Test
  void theApiAcceptsEveryVersionIdTheEntityAcceptsAndNoMore() {
    String longest = "v" + "1".repeat(127);
    for (String version : new String[] {"1.2.0+lora", longest}) {
      Http.Response reg = http.post("/v1/models/agent-ids/versions",
          "{\"version\":\"" + version + "\",\"artifact\":\"file:///m\",\"endpoint\":\"http://infer:8000/v1\"}");
      assertEquals(201, reg.status(), version + ": " + reg.body());
      Http.Response pause = http.post("/v1/models/agent-ids/versions/" + version + "/pause", "");
      assertTrue(pause.status() != 400 && pause.status() < 500, version + ": " + pause.status() + " " + pause.body());
    }
    assertError(http.post("/v1/models/agent-ids/versions",
        "{\"version\":\"v" + "1".repeat(128) + "\",\"artifact\":\"file:///m\",\"endpoint\":\"http://e\"}"), 400,
        "invalid_request");
    assertEquals(2, http.get("/v1/models/agent-ids").json().get("versions").size());
  }

  /**
   * One rule for every path: a single trailing slash is ignored. GET of an entity took one, but
   * action and ops paths ({@code …/events/}, {@code …/route/}, {@code /metrics/}, {@code /health/ready/})
   * answered a generic 404, and a new user could not tell a typo from a missing route.
   */
  @Test
  void aTrailingSlashIsIgnoredOnEveryPath() {
    String events = "{\"agentId\":\"a-slash\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\"},"
        + "{\"type\":\"result\",\"status\":\"SUCCESS\"}]}";
    assertEquals(202, http.post("/v1/sessions/s-slash/events/", events).status());
    assertEquals("a-slash", http.get("/v1/sessions/s-slash/").json().get("agentId").asText());
    assertEquals(http.post("/v1/sessions/s-slash/feedback", "{\"kind\":\"THUMBS_UP\"}").status(),
        http.post("/v1/sessions/s-slash/feedback/", "{\"kind\":\"THUMBS_DOWN\"}").status());
    assertEquals(200, http.post("/v1/feedback/rate/?sessionId=s-slash&score=4", null).status());
    Http.Response reg = http.post("/v1/models/agent-slash/versions/",
        "{\"version\":\"v1\",\"artifact\":\"file:///models/v1\",\"endpoint\":\"http://infer:8000/v1\"}");
    assertEquals(201, reg.status(), reg.body());
    for (String path : new String[] {"/v1/models/agent-slash/route?sessionId=s1", "/v1/models/agent-slash/traffic",
        "/v1/models/agent-slash", "/v1/jobs", "/v1/training/agent-slash", "/metrics", "/health/ready", "/health/live"}) {
      String slashed = path.contains("?") ? path.replace("?", "/?") : path + "/";
      Http.Response plain = http.get(path);
      Http.Response withSlash = http.get(slashed);
      assertEquals(plain.status(), withSlash.status(), slashed + ": " + withSlash.body());
      assertEquals(plain.headers().firstValue("Content-Type"), withSlash.headers().firstValue("Content-Type"), slashed);
    }
    assertEquals(200, http.get("/metrics/").status());
    // Two trailing slashes are still a typo; and the labels are those of the paths without a slash.
    assertError(http.post("/v1/sessions/s-slash/events//", events), 404, "not_found");
    String metrics = http.get("/metrics").body();
    assertTrue(metrics.contains("route=\"POST /v1/sessions/{id}/events\""), metrics);
    assertTrue(metrics.contains("route=\"POST /v1/models/{id}/versions\""), metrics);
    assertFalse(metrics.matches("(?s).*route=\"[^\"]*[^\" ]/\".*"), metrics);
  }
}
