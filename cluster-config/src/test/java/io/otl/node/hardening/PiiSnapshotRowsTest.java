package io.otl.node.hardening;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.session.PiiSamples;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.JournalSchema;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.GZIPInputStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * PII in the places a review found unprotected (JSON keys of metadata and tool input, feedback
 * {@code source}, reasoning {@code observation}) must not reach the journal's raw rows nor the
 * snapshot rows, which hold the whole session state and are what a restart reads. Each session
 * writes more than the 100 events after which a session snapshots, one event per request, so a
 * snapshot row exists for it (asserted).
 */
class PiiSnapshotRowsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String AGENT = "agent-pii-snap";
  /** One sample of each kind the desensitizer names: enough to see a disabled rule in every field. */
  private static final List<PiiSamples.Sample> SAMPLES = List.of(
      byPlaceholder("[EMAIL]"), byPlaceholder("[PHONE]"), byPlaceholder("[ID_CARD]"));
  private static TrainingNode node;
  private static Http http;

  private static PiiSamples.Sample byPlaceholder(String placeholder) {
    return PiiSamples.ALL.stream().filter(s -> s.placeholder().equals(placeholder)).findFirst()
        .orElseThrow(() -> new AssertionError("no sample for " + placeholder));
  }

  @BeforeAll
  static void start() throws Exception {
    Path target = Path.of("target").toAbsolutePath();
    Files.createDirectories(target);
    node = TrainingNode.start(TestDatabases.node(
        TestDatabases.h2(Files.createTempDirectory(target, "pii-snap-").resolve("data")), true));
    http = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  /** The PII in a metadata key, a tool-input key, a feedback source and a reasoning observation. */
  private static String piiEvents(PiiSamples.Sample s) {
    String t = "x " + s.text() + " y";
    ObjectNode body = JSON.createObjectNode().put("agentId", AGENT);
    ArrayNode events = body.putArray("events");
    events.addObject().put("type", "start").put("eventId", "e0").putObject("metadata").put(s.text(), "v");
    ObjectNode tool = events.addObject().put("type", "tool_call").put("eventId", "e1").put("callId", "c1")
        .put("toolName", "lookup").put("success", true);
    tool.putObject("input").put(s.text(), "v");
    tool.putObject("output").put("ok", "v");
    events.addObject().put("type", "reasoning").put("eventId", "e2").put("index", 0).put("thought", "t")
        .put("action", "a").put("observation", t);
    events.addObject().put("type", "feedback").put("eventId", "e3").put("kind", "THUMBS_UP").put("source", t);
    return body.toString();
  }

  @Test
  void piiInKeysSourceAndObservationIsInNoJournalNorSnapshotRow() throws Exception {
    for (int i = 0; i < SAMPLES.size(); i++) {
      PiiSamples.Sample s = SAMPLES.get(i);
      String session = "pii-snap-" + i;
      Http.Response r = http.post("/v1/sessions/" + session + "/events", piiEvents(s));
      assertEquals(202, r.status(), s + ": " + r.body());
      // One event per request: the sequence number passes every value, 100 included, where the session snapshots.
      for (int m = 0; m < 130 && rows(session, true).isEmpty(); m++) {
        Http.Response msg = http.post("/v1/sessions/" + session + "/events", "{\"agentId\":\"" + AGENT
            + "\",\"events\":[{\"type\":\"message\",\"eventId\":\"m" + m + "\",\"role\":\"user\",\"content\":\"m\"}]}");
        assertEquals(202, msg.status(), msg.body());
      }
      List<String> snapshots = rows(session, true);
      assertFalse(snapshots.isEmpty(), session + " was never snapshotted");
      List<String> journal = rows(session, false);
      assertTrue(journal.size() >= 100, session + ": " + journal.size() + " journal rows");
      List<String> all = new ArrayList<>(journal);
      all.addAll(snapshots);
      for (String row : all) assertFalse(s.leaksIn(row), s.name() + " stored raw: " + row);
      String snapshot = String.join("\n", snapshots);
      // The fields are in the snapshot, desensitized: a state that dropped them would also "pass".
      assertTrue(snapshot.contains(s.placeholder() + "\""), s.name() + ": no desensitized key in " + snapshot);
      assertTrue(snapshot.contains("x " + s.placeholder() + " y"), s.name() + ": no desensitized text in " + snapshot);
    }
  }

  /** The raw payloads of the session's journal (or snapshot) rows, as stored. */
  private static List<String> rows(String session, boolean snapshot) throws Exception {
    String sql = snapshot
        ? "SELECT \"snapshot_payload\" FROM \"snapshot\" WHERE \"persistence_id\" = ?"
        : "SELECT \"event_payload\" FROM \"event_journal\" WHERE \"persistence_id\" = ?";
    List<String> out = new ArrayList<>();
    try (Connection c = JournalSchema.connect(node.journal()); PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, "AgentSession|" + session);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) out.add(text(rs.getBytes(1)));
      }
    }
    return out;
  }

  /** Jackson compresses large payloads with gzip; the scan reads what they hold. */
  private static String text(byte[] bytes) throws java.io.IOException {
    if (bytes.length > 2 && (bytes[0] & 0xff) == 0x1f && (bytes[1] & 0xff) == 0x8b) {
      try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(bytes))) {
        return new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
    }
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
