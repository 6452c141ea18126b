package io.otl.node.hardening;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.session.PiiSamples;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.JournalSchema;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The PII formats of issue #14 (and the look-alikes of a later trial) in every field a client can fill, through real HTTP: none may be
 * found afterwards in the journal's rows, the GET answer, the audit answer or the export; ids that
 * are PII are refused with 400 and their value is never echoed.
 */
class PiiEverywhereTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String AGENT = "agent-pii";
  private static TrainingNode node;
  private static Http http;

  @BeforeAll
  static void start() throws Exception {
    Path target = Path.of("target").toAbsolutePath();
    Files.createDirectories(target);
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory(target, "pii-").resolve("data")), true));
    http = new Http(node.httpPort());
    for (int i = 0; i < PiiSamples.ALL.size(); i++) {
      Http.Response r = http.post("/v1/sessions/pii-" + i + "/events", everyField(PiiSamples.ALL.get(i)));
      assertEquals(202, r.status(), PiiSamples.ALL.get(i) + ": " + r.body());
    }
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  static Stream<Arguments> samples() {
    return IntStream.range(0, PiiSamples.ALL.size()).mapToObj(i -> Arguments.of(PiiSamples.ALL.get(i), i));
  }

  /** One session with the sample in every free-text field, key and id the client chooses (except the ids tested below). */
  static String everyField(PiiSamples.Sample s) {
    String t = "x " + s.text() + " y";
    ObjectNode body = JSON.createObjectNode();
    body.put("agentId", AGENT);
    ArrayNode events = body.putArray("events");
    ObjectNode start = events.addObject().put("type", "start").put("eventId", "e0")
        .put("agentVersion", t).put("modelVersion", t);
    start.putObject("metadata").put(s.text(), t).put("channel", t);
    events.addObject().put("type", "message").put("eventId", "e1").put("role", "user").put("content", t)
        .put("msgId", s.text());
    ObjectNode tool = events.addObject().put("type", "tool_call").put("eventId", "e2").put("callId", s.text())
        .put("toolName", t).put("success", true);
    ObjectNode input = tool.putObject("input");
    input.put(s.text(), t);
    input.putObject("nested").putArray("list").add(t);
    String digits = s.text();
    if (digits.matches("[1-9][0-9]{6,17}")) input.set("num", JSON.getNodeFactory().numberNode(new java.math.BigInteger(digits)));
    tool.putObject("output").put("r", t);
    events.addObject().put("type", "reasoning").put("eventId", "e3").put("index", 0).put("thought", t)
        .put("action", t).put("observation", t);
    events.addObject().put("type", "message").put("eventId", "e4").put("role", "assistant").put("content", t)
        .put("msgId", "m-" + s.name().replace(' ', '-').replaceAll("[^A-Za-z0-9-]", ""));
    events.addObject().put("type", "feedback").put("eventId", "e5").put("kind", "THUMBS_UP").put("source", t);
    events.addObject().put("type", "result").put("eventId", "e6").put("status", "SUCCESS").put("detail", t);
    return body.toString();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samples")
  void noFormatSurvivesInTheJournalTheSessionOrItsAudit(PiiSamples.Sample s, int i) throws Exception {
    List<String> rows = new ArrayList<>();
    try (Connection c = JournalSchema.connect(node.journal());
        PreparedStatement ps = c.prepareStatement(
            "SELECT \"event_payload\" FROM \"event_journal\" WHERE \"persistence_id\" = ?")) {
      ps.setString(1, "AgentSession|pii-" + i);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) rows.add(new String(rs.getBytes(1), StandardCharsets.UTF_8));
      }
    }
    assertTrue(rows.size() >= 7, "stored: " + rows.size());
    for (String row : rows) assertFalse(s.leaksIn(row), row);
    String all = String.join("\n", rows);
    assertTrue(all.contains(s.placeholder()), all);

    Http.Response session = http.get("/v1/sessions/pii-" + i);
    assertEquals(200, session.status(), session.body());
    assertFalse(s.leaksIn(session.body()), session.body());
    Http.Response audit = http.get("/v1/audit/session/pii-" + i);
    assertEquals(200, audit.status(), audit.body());
    assertFalse(s.leaksIn(audit.body()), audit.body());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samples")
  void anIdThatIsPiiIsRefusedWithoutEchoAndNothingIsStored(PiiSamples.Sample s, int i) throws Exception {
    String encoded = URLEncoder.encode(s.text(), StandardCharsets.UTF_8).replace("+", "%20");
    Http.Response asSession = http.post("/v1/sessions/" + encoded + "/events",
        "{\"agentId\":\"" + AGENT + "\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}]}");
    assertRefused(s, asSession);
    ObjectNode asAgent = JSON.createObjectNode().put("agentId", s.text());
    asAgent.putArray("events").addObject().put("type", "message").put("role", "user").put("content", "hi");
    assertRefused(s, http.post("/v1/sessions/id-agent-" + i + "/events", asAgent.toString()));
    ObjectNode asEvent = JSON.createObjectNode().put("agentId", AGENT);
    asEvent.putArray("events").addObject().put("type", "message").put("role", "user").put("content", "hi")
        .put("eventId", s.text());
    assertRefused(s, http.post("/v1/sessions/id-event-" + i + "/events", asEvent.toString()));
    ObjectNode asFeedback = JSON.createObjectNode().put("kind", "THUMBS_UP").put("feedbackId", s.text());
    assertRefused(s, http.post("/v1/sessions/pii-" + i + "/feedback", asFeedback.toString()));
    assertEquals(404, http.get("/v1/sessions/id-agent-" + i).status(), "nothing stored");
    assertEquals(404, http.get("/v1/sessions/id-event-" + i).status(), "nothing stored");
  }

  private static void assertRefused(PiiSamples.Sample s, Http.Response r) {
    assertEquals(400, r.status(), s + ": " + r.body());
    assertFalse(s.leaksIn(r.body()), r.body());
    assertEquals("invalid_request", r.json().path("error").asText(), r.body());
  }

  @Test
  void aMobileAsSessionIdIsNamedForWhatItLooksLike() {
    Http.Response r = http.post("/v1/sessions/13812345678/events",
        "{\"agentId\":\"" + AGENT + "\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}]}");
    assertEquals(400, r.status());
    assertEquals("sessionId looks like a phone number; use an opaque id", r.json().path("message").asText(), r.body());
  }

  /**
   * A phone or card number a tool hands over as a float (pandas writes a column of numbers with a gap
   * as float64: 13812345678.0) was stored as 1.3812345678E10, a form in which no rule, nor the export's
   * final scan, saw the digits. Found by the contract trial (t1).
   */
  @Test
  void aNumberWrittenAsAFloatIsScannedAsTheIntegerItHolds() throws Exception {
    Http.Response r = http.post("/v1/sessions/pii-float/events", "{\"agentId\":\"agent-pii-float\",\"events\":["
        + "{\"type\":\"tool_call\",\"eventId\":\"t1\",\"callId\":\"c1\",\"toolName\":\"crm\","
        + "\"input\":{\"phone\":13812345678.0,\"exp\":1.3812345678e10,\"card\":4111111111111111.0,"
        + "\"ratio\":0.25,\"round\":10000000.0,\"fraction\":13812345678.5},\"output\":[13912345678.00]}]}");
    assertEquals(202, r.status(), r.body());
    JsonNode call = http.get("/v1/sessions/pii-float").json().path("toolCalls").path(0);
    assertEquals("[PHONE]", call.path("input").path("phone").asText(), call.toString());
    assertEquals("[PHONE]", call.path("input").path("exp").asText(), call.toString());
    assertEquals("[BANK_CARD]", call.path("input").path("card").asText(), call.toString());
    assertEquals("[PHONE]", call.path("output").path(0).asText(), call.toString());
    assertEquals(0.25, call.path("input").path("ratio").doubleValue(), call.toString());
    assertTrue(call.path("input").path("round").isNumber(), "a float that is no PII stays a number: " + call);
    assertTrue(call.path("input").path("fraction").isNumber(), "a float with a fraction stays: " + call);
    List<String> rows = new ArrayList<>();
    try (Connection c = JournalSchema.connect(node.journal());
        PreparedStatement ps = c.prepareStatement(
            "SELECT \"event_payload\" FROM \"event_journal\" WHERE \"persistence_id\" = ?")) {
      ps.setString(1, "AgentSession|pii-float");
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) rows.add(new String(rs.getBytes(1), StandardCharsets.UTF_8));
      }
    }
    String all = String.join("\n", rows);
    for (String raw : List.of("3812345678E10", "13812345678.0", "3912345678", "4111111111111111")) {
      assertFalse(all.contains(raw), raw + " in " + all);
    }
  }

  @Test
  void theExportOfAllTheseSessionsHoldsNoneOfThem() throws Exception {
    FeedbackAwait.completed(http, PiiSamples.ALL.size());
    Http.Response export = http.post("/v1/exports/" + AGENT + "?format=sft", "");
    assertEquals(200, export.status(), export.body());
    String[] lines = export.body().split("\n");
    JsonNode manifest = JSON.readTree(lines[0]);
    assertEquals(PiiSamples.ALL.size(), manifest.get("count").asInt(), lines[0]);
    assertEquals(0, manifest.get("piiFindings").size(), "the final scan finds nothing: " + lines[0]);
    for (PiiSamples.Sample s : PiiSamples.ALL) assertFalse(s.leaksIn(export.body()), s.name());
  }

  /** Waits until every test session is completed (the export reads completions from the tag stream). */
  private static final class FeedbackAwait {
    static void completed(Http http, int n) throws InterruptedException {
      io.otl.node.readside.FeedTestSupport.await(n + " sessions completed", java.time.Duration.ofSeconds(60), () -> {
        for (int i = 0; i < n; i++) {
          if (!http.get("/v1/sessions/pii-" + i).json().path("status").asText().equals("COMPLETED")) return false;
        }
        return true;
      });
    }
  }
}
