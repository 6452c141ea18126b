package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.testing.Http;
import io.otl.persistence.JournalSchema;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Trial t159: {@code X-Agent-Id: sk-proj-…} (the agent's key in the wrong header, gateway auth off) was
 * accepted, logged at INFO when its v0 was registered, put whole into /metrics labels and journaled as
 * the agent id; a session id holding a key went the same way. Through real HTTP, the gateway and the
 * events API now answer 400 without repeating the id, and the journal, /metrics and the log hold nothing
 * of the key. A session an earlier build stored under such an id still answers reads and appends.
 * Keys are assembled at run time: no key-shaped literal in the source.
 */
class IdsHoldingKeysOverHttpTest {
  private static final String KEY = "sk-" + "proj-" + "AbCdEf1234567890GhIjKlMnOpQrStUv" + "WxYz0987";
  /** What of the key is looked for: its body, as the prefix alone may stand in prose. */
  private static final String KEY_BODY = KEY.substring(8);
  private static GatewayTestNode gateway;
  private static final ListAppender<ILoggingEvent> LOG = new ListAppender<>();

  @BeforeAll
  static void start() throws Exception {
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    LOG.start();
    root.addAppender(LOG);
    // A base model configured: an agent's first routed call registers its v0 (the INFO line of the trial).
    gateway = GatewayTestNode.start("ids-holding-keys", simulator -> Map.of(
        "agentscope.model.base-url", simulator.baseUrl() + "/v1",
        "agentscope.model.model-name", "qwen-base"));
  }

  @AfterAll
  static void stop() {
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(LOG);
    if (gateway != null) gateway.close();
  }

  @Test
  void theGatewayRefusesAnAgentIdOrSessionIdHoldingAKey() throws Exception {
    long forwarded = gateway.simulatorRequests();
    Http.Response agent = gateway.api.chat(KEY, "s-" + UUID.randomUUID(), "hi", false);
    assertOpenAi400(agent, "X-Agent-Id");
    Http.Response prefixed = gateway.api.chat("gwa-" + KEY, "s-" + UUID.randomUUID(), "hi", false);
    assertOpenAi400(prefixed, "X-Agent-Id");
    Http.Response session = gateway.api.chat("keys-ok-agent", "legacy-" + KEY, "hi", false);
    assertOpenAi400(session, "X-Session-Id");
    assertEquals(forwarded, gateway.simulatorRequests(), "a refused call was forwarded");
    // the same agent with an opaque id is served
    assertEquals(200, gateway.api.chat("keys-ok-agent", "s-" + UUID.randomUUID(), "hi", false).status());
    assertNothingHoldsTheKey();
  }

  @Test
  void theEventsApiRefusesASessionIdOrAgentIdHoldingAKey() throws Exception {
    String batch = "{\"agentId\":\"%s\",\"events\":[{\"type\":\"message\",\"eventId\":\"m1\",\"role\":\"user\","
        + "\"content\":\"hello\"}]}";
    Http.Response session = gateway.api.post("/v1/sessions/" + KEY + "/events", batch.formatted("keys-api-agent"));
    assertApi400(session);
    Http.Response agent = gateway.api.post("/v1/sessions/s-" + UUID.randomUUID() + "/events", batch.formatted(KEY));
    assertApi400(agent);
    // nor is a version registered for an agent of that id
    Http.Response version = gateway.api.post("/v1/models/" + KEY + "/versions",
        "{\"version\":\"v1\",\"artifact\":\"file:///models/v1\",\"endpoint\":\"http://127.0.0.1:9/v1\"}");
    assertApi400(version);
    // nor is a training policy set for it (a policy may be an agent's first fact)
    Http.Response policy = gateway.api.put("/v1/training/" + KEY + "/policy", "{}");
    assertApi400(policy);
    // a read of it is a 404 that starts no session for it
    Http.Response read = gateway.api.get("/v1/sessions/" + KEY);
    assertEquals(404, read.status(), read.body());
    assertFalse(read.body().contains(KEY_BODY), read.body());
    assertNothingHoldsTheKey();
  }

  /**
   * Review t178 (a fuzzer over HTTP): an {@code eventId} or {@code feedbackId} holding a key was a 202, and the
   * journal, the session's answer and its exports held the key whole (ids are stored as sent, past the
   * desensitizer). Such a new id is now a 400 naming the field, not the key, and nothing of the batch is stored.
   */
  @Test
  void theEventsApiRefusesAnEventIdOrFeedbackIdHoldingAKey() throws Exception {
    String session = "s-" + UUID.randomUUID();
    Http.Response first = gateway.api.post("/v1/sessions/" + session + "/events", "{\"agentId\":\"keys-event-agent\","
        + "\"events\":[{\"type\":\"message\",\"eventId\":\"m1\",\"role\":\"user\",\"content\":\"hello\"}]}");
    assertEquals(202, first.status(), first.body());
    Http.Response event = gateway.api.post("/v1/sessions/" + session + "/events", "{\"agentId\":\"keys-event-agent\","
        + "\"events\":[{\"type\":\"message\",\"eventId\":\"m2\",\"role\":\"assistant\",\"content\":\"a\"},"
        + "{\"type\":\"message\",\"eventId\":\"m3-" + KEY + "\",\"role\":\"user\",\"content\":\"b\"}]}");
    assertApi400(event);
    assertTrue(event.body().contains("events[1].eventId looks like an API key"), event.body());
    Http.Response feedbackEvent = gateway.api.post("/v1/sessions/" + session + "/events", "{\"agentId\":"
        + "\"keys-event-agent\",\"events\":[{\"type\":\"feedback\",\"eventId\":\"f1\",\"kind\":\"THUMBS_UP\","
        + "\"feedbackId\":\"" + KEY + "\"}]}");
    assertApi400(feedbackEvent);
    Http.Response feedback = gateway.api.post("/v1/sessions/" + session + "/feedback",
        "{\"kind\":\"THUMBS_UP\",\"feedbackId\":\"" + KEY + "\"}");
    assertApi400(feedback);
    Http.Response feedbackEventId = gateway.api.post("/v1/sessions/" + session + "/feedback",
        "{\"kind\":\"THUMBS_UP\",\"eventId\":\"" + KEY + "\"}");
    assertApi400(feedbackEventId);
    JsonNode stored = gateway.api.get("/v1/sessions/" + session).json();
    assertEquals(1, stored.path("messages").size(), stored.toString());
    assertEquals(0, stored.path("feedback").size(), stored.toString());
    assertNothingHoldsTheKey();
  }

  /**
   * Trial t167: {@code GET /v1/jobs?agentId=<key>} asked the agent's coordinator for its jobs, which
   * started that entity, and sharding journaled the key as a remembered entity id. The other reads of an
   * unknown key-like agent start nothing either.
   */
  @Test
  void readsOfAnUnknownAgentWhoseIdHoldsAKeyStartNoEntity() throws Exception {
    String agent = "jobs-" + KEY;
    Http.Response jobs = gateway.api.get("/v1/jobs?agentId=" + agent);
    assertEquals(200, jobs.status(), jobs.body());
    assertEquals("{\"jobs\":[]}", jobs.body());
    assertEquals(404, gateway.api.get("/v1/training/" + agent).status());
    assertEquals(404, gateway.api.get("/v1/training/" + agent + "/policy").status());
    // nor do the answers of the audit and the export repeat the id they were asked about
    for (Http.Response r : java.util.List.of(gateway.api.get("/v1/audit/session/" + agent),
        gateway.api.get("/v1/audit/model/" + agent), gateway.api.get("/v1/audit/coordinator/" + agent),
        gateway.api.post("/v1/exports/" + agent + "?format=sft", ""),
        gateway.api.post("/v1/models/" + agent + "/versions/v1/promote", ""),
        gateway.api.get("/v1/jobs/job-1-" + agent))) {
      assertTrue(r.status() == 404 || r.status() == 422, r.status() + " " + r.body());
      assertFalse(r.body().contains(KEY_BODY), "the answer repeats the key: " + r.body());
      assertTrue(r.body().contains("key-like-id-"), r.body());
    }
    // a shard remembers an entity before starting it, so a started coordinator's row is there once it answered
    assertNothingHoldsTheKey();
  }

  /** The embedded Java API: the same refusal, as the exception its other refusals are. */
  @Test
  void theJavaApiRefusesASessionIdHoldingAKey() throws Exception {
    var m = new io.otl.core.session.SessionInput.Message("j1", null, "user", "hello", null, null);
    var failure = org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class,
        () -> gateway.node.dataCollector().record("java-" + KEY, "keys-java-agent", m).toCompletableFuture().get());
    assertTrue(failure.getCause() instanceof io.otl.core.api.DataCollector.RecordRejectedException, failure.toString());
    assertTrue(failure.getCause().getMessage().contains("looks like an API key"), failure.getCause().getMessage());
    assertFalse(failure.getCause().getMessage().contains(KEY_BODY), failure.getCause().getMessage());
    assertNothingHoldsTheKey();
  }

  /** An OpenTelemetry chat span whose conversation id holds a key is refused as other bad spans are. */
  @Test
  void anOtlpSpanWhoseSessionIdHoldsAKeyIsRefused() throws Exception {
    String span = "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"0102030405060708090a0b0c0d0e0f99\","
        + "\"spanId\":\"0000000000000099\",\"name\":\"chat\",\"attributes\":["
        + "{\"key\":\"gen_ai.operation.name\",\"value\":{\"stringValue\":\"chat\"}},"
        + "{\"key\":\"gen_ai.conversation.id\",\"value\":{\"stringValue\":\"conv-" + KEY + "\"}},"
        + "{\"key\":\"gen_ai.agent.name\",\"value\":{\"stringValue\":\"keys-otel-agent\"}},"
        + "{\"key\":\"gen_ai.input.messages\",\"value\":{\"stringValue\":"
        + "\"[{\\\"role\\\":\\\"user\\\",\\\"content\\\":\\\"hi\\\"}]\"}}]}]}]}]}";
    Http.Response r = gateway.api.post("/v1/traces", span);
    assertEquals(200, r.status(), r.body());
    assertEquals(1, r.json().path("partialSuccess").path("rejectedSpans").asInt(), r.body());
    assertTrue(r.body().contains("looks like an API key"), r.body());
    assertFalse(r.body().contains(KEY_BODY), "the answer repeats the key: " + r.body());
    assertNothingHoldsTheKey();
  }

  /**
   * A session an earlier build stored under a key-like id (its rows copied under that id, as the journal
   * of such a build holds them): it is no new session, so it answers its reads and takes appends.
   */
  @Test
  void aSessionAnEarlierBuildStoredUnderAKeyLikeIdKeepsWorking() throws Exception {
    String plain = "legacy-plain-" + UUID.randomUUID();
    // a key of its own: what this session logs and labels (as an earlier build's session does) is not asked about here
    String keyed = "legacy-old-" + "sk-" + "prev-" + "ZyXwVu9876543210TsRqPoNmLkJiHgFe" + "DcBa1234";
    Http.Response first = gateway.api.post("/v1/sessions/" + plain + "/events", "{\"agentId\":\"legacy-agent\","
        + "\"events\":[{\"type\":\"message\",\"eventId\":\"m1\",\"role\":\"user\",\"content\":\"hello\"}]}");
    assertEquals(202, first.status(), first.body());
    try (Connection c = JournalSchema.connect(gateway.node.journal())) {
      copyRows(c, "AgentSession|" + plain, "AgentSession|" + keyed);
    }
    Http.Response read = gateway.api.get("/v1/sessions/" + keyed);
    assertEquals(200, read.status(), read.body());
    assertEquals("legacy-agent", read.json().path("agentId").asText(), read.body());
    Http.Response append = gateway.api.post("/v1/sessions/" + keyed + "/events", "{\"agentId\":\"legacy-agent\","
        + "\"events\":[{\"type\":\"message\",\"eventId\":\"m2\",\"role\":\"assistant\",\"content\":\"hi there\"}]}");
    assertEquals(202, append.status(), append.body());
    Http.Response result = gateway.api.post("/v1/sessions/" + keyed + "/events", "{\"agentId\":\"legacy-agent\","
        + "\"events\":[{\"type\":\"result\",\"eventId\":\"r1\",\"status\":\"SUCCESS\"}]}");
    assertEquals(202, result.status(), result.body());
    assertEquals(2, gateway.api.get("/v1/sessions/" + keyed).json().path("messages").size());
  }

  /**
   * An agent an earlier build registered under a key-like id (its model rows copied under that id): the
   * gateway still serves it and records its new sessions, and /metrics labels it without the key.
   */
  @Test
  void anAgentAnEarlierBuildRegisteredUnderAKeyLikeIdIsStillServed() throws Exception {
    String plain = "legacy-model-" + UUID.randomUUID().toString().substring(0, 8);
    String keyed = "old-" + "sk-" + "prev-" + "QwErTy5678901234AsDfGhJkLzXcVbNm";
    // its first call registers its v0, the base model
    assertEquals(200, gateway.api.chat(plain, "s-" + UUID.randomUUID(), "hi", false).status());
    try (Connection c = JournalSchema.connect(gateway.node.journal())) {
      copyRows(c, "ModelVersion|" + plain, "ModelVersion|" + keyed);
    }
    String session = "s-" + UUID.randomUUID();
    Http.Response served = gateway.api.chat(keyed, session, "hi", false);
    assertEquals(200, served.status(), served.body());
    JsonNode recorded = gateway.awaitSession(session, s -> s.path("messages").size() >= 2);
    assertEquals(keyed, recorded.path("agentId").asText());
    Http.Response metrics = gateway.api.get("/metrics");
    assertFalse(metrics.body().contains("QwErTy5678901234"), "a metric label holds the key");
    assertTrue(metrics.body().contains("agent=\"key-like-id-"), "the agent's calls are labelled without the key");
  }

  private static void copyRows(Connection c, String from, String to) throws Exception {
    try (PreparedStatement copy = c.prepareStatement("INSERT INTO \"event_journal\"(\"deleted\", \"persistence_id\","
        + " \"sequence_number\", \"writer\", \"write_timestamp\", \"adapter_manifest\", \"event_payload\","
        + " \"event_ser_id\", \"event_ser_manifest\", \"meta_payload\", \"meta_ser_id\", \"meta_ser_manifest\")"
        + " SELECT \"deleted\", ?, \"sequence_number\", \"writer\", \"write_timestamp\", \"adapter_manifest\","
        + " \"event_payload\", \"event_ser_id\", \"event_ser_manifest\", \"meta_payload\", \"meta_ser_id\","
        + " \"meta_ser_manifest\" FROM \"event_journal\" WHERE \"persistence_id\" = ? ORDER BY \"sequence_number\"")) {
      copy.setString(1, to);
      copy.setString(2, from);
      assertTrue(copy.executeUpdate() > 0, "no rows to copy");
    }
  }

  private static void assertOpenAi400(Http.Response r, String param) {
    assertEquals(400, r.status(), r.body());
    assertEquals("invalid_request_error", r.json().path("error").path("type").asText(), r.body());
    assertEquals(param, r.json().path("error").path("param").asText(), r.body());
    String message = r.json().path("error").path("message").asText();
    assertTrue(message.startsWith(param + " looks like an API key; a key belongs in the Authorization header"),
        message);
    assertFalse(r.body().contains(KEY_BODY), "the answer repeats the key: " + r.body());
  }

  private static void assertApi400(Http.Response r) {
    assertEquals(400, r.status(), r.body());
    assertTrue(r.body().contains("looks like an API key; a key belongs in the Authorization header"), r.body());
    assertFalse(r.body().contains(KEY_BODY), "the answer repeats the key: " + r.body());
  }

  private static void assertNothingHoldsTheKey() throws Exception {
    try (Connection c = JournalSchema.connect(gateway.node.journal());
        PreparedStatement rows = c.prepareStatement(
            "SELECT \"persistence_id\", \"event_payload\" FROM \"event_journal\"");
        ResultSet rs = rows.executeQuery()) {
      while (rs.next()) {
        String id = rs.getString(1);
        assertFalse(id.contains(KEY_BODY), "journaled under " + id);
        assertFalse(new String(rs.getBytes(2), StandardCharsets.UTF_8).contains(KEY_BODY), "journaled in " + id);
      }
    }
    Http.Response metrics = gateway.api.get("/metrics");
    assertEquals(200, metrics.status(), metrics.body());
    assertFalse(metrics.body().contains(KEY_BODY), "a metric label holds the key");
    for (ILoggingEvent e : LOG.list.toArray(new ILoggingEvent[0])) {
      assertFalse(e.getFormattedMessage().contains(KEY_BODY), "logged: " + e.getFormattedMessage());
    }
    Http.Response agents = gateway.api.get("/v1/agents");
    assertFalse(agents.body().contains(KEY_BODY), agents.body());
  }
}
