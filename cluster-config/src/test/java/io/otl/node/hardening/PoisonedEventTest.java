package io.otl.node.hardening;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import io.otl.node.AuditCommand;
import io.otl.node.TrainingNode;
import io.otl.node.readside.FeedTestSupport;
import io.otl.node.testing.TestDatabases;
import io.otl.node.testing.ToolsJournal;
import io.otl.persistence.JournalSchema;
import io.otl.persistence.JournalSettings;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Poisoned events already in the journal (issue #14 item 6), written straight into it, past any
 * ingest limit: tool input nested 997 levels (readable, too deep to render) and 1,200 levels (beyond
 * what Jackson reads). Audit answers 200 with a placeholder; the export leaves those sessions out,
 * counts them in the manifest and writes the rest.
 */
class PoisonedEventTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void auditAndExportSkipPoisonedEventsAndSayHowMany() throws Exception {
    ToolsJournal journal = ToolsJournal.create("poison");
    Config db = journal.db();
    Path config = journal.config("node.conf");
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(db, true))) {
      for (String id : List.of("ok-1", "deep-1", "unread-1")) {
        FeedTestSupport.session(node.dataCollector(), id, "agent-p", "question " + id, "answer", true)
            .toCompletableFuture().get(60, TimeUnit.SECONDS);
      }
      poison(node.journal(), "deep-1", 997);
      poison(node.journal(), "unread-1", 1200);
      String base = "http://127.0.0.1:" + node.httpPort();

      for (String id : List.of("deep-1", "unread-1")) {
        HttpResponse<String> audit = get(base + "/v1/audit/session/" + id);
        assertEquals(200, audit.statusCode(), audit.body());
        JsonNode events = JSON.readTree(audit.body()).get("events");
        long placeholders = 0;
        for (JsonNode e : events) if (e.get("type").asText().equals("UnreadableEvent")) placeholders++;
        assertEquals(1, placeholders, audit.body());
        assertEquals(6, events.size(), "the other events are all there: " + audit.body());
      }
      HttpResponse<String> asOf = get(base + "/v1/audit/session/unread-1?asOf=2999-01-01T00:00:00Z");
      assertEquals(200, asOf.statusCode(), asOf.body());

      // The trajectory feed reads each session's msgIds; a poisoned session must not stall it.
      FeedTestSupport.await("all three trajectories pooled", java.time.Duration.ofSeconds(60), () -> {
        try {
          return JSON.readTree(get(base + "/v1/training/agent-p").body()).path("poolSize").asInt() == 3;
        } catch (Exception e) {
          return false;
        }
      });

      HttpResponse<String> export = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/exports/agent-p?format=sft"))
          .POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, export.statusCode(), export.body());
      String[] lines = export.body().split("\n");
      JsonNode manifest = JSON.readTree(lines[0]);
      assertEquals(1, manifest.get("count").asInt(), lines[0]);
      assertEquals("ok-1", manifest.get("sessionIds").get(0).asText());
      int skipped = 0;
      for (JsonNode n : manifest.get("skipped")) skipped += n.asInt();
      assertEquals(2, skipped, "both poisoned sessions counted by reason: " + manifest.get("skipped"));
      assertEquals(1, manifest.get("skipped").path("unreadable_event").asInt(), manifest.get("skipped").toString());
      assertEquals(2, lines.length, "the manifest and one line");
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = AuditCommand.run(List.of("session", "unread-1", "--config", config.toString()),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
    assertTrue(out.toString(StandardCharsets.UTF_8).contains("UNREADABLE"), out.toString(StandardCharsets.UTF_8));
  }

  private HttpResponse<String> get(String url) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create(url)).GET().build(), HttpResponse.BodyHandlers.ofString());
  }

  /** Replaces the tool input {"q":"<id>"} of the session's stored ToolCallRecorded with JSON nested {@code depth} deep. */
  private static void poison(JournalSettings journal, String sessionId, int depth) throws Exception {
    String marker = "{\"q\":\"" + sessionId + "\"}";
    String deep = "{\"a\":".repeat(depth - 1) + "{}" + "}".repeat(depth - 1);
    try (Connection c = JournalSchema.connect(journal);
        PreparedStatement select = c.prepareStatement(
            "SELECT \"sequence_number\", \"event_payload\" FROM \"event_journal\" WHERE \"persistence_id\" = ?")) {
      select.setString(1, "AgentSession|" + sessionId);
      int changed = 0;
      try (ResultSet rs = select.executeQuery()) {
        while (rs.next()) {
          String payload = new String(rs.getBytes(2), StandardCharsets.UTF_8);
          if (!payload.contains(marker)) continue;
          try (PreparedStatement update = c.prepareStatement("UPDATE \"event_journal\" SET \"event_payload\" = ? "
              + "WHERE \"persistence_id\" = ? AND \"sequence_number\" = ?")) {
            update.setBytes(1, payload.replace(marker, deep).getBytes(StandardCharsets.UTF_8));
            update.setString(2, "AgentSession|" + sessionId);
            update.setLong(3, rs.getLong(1));
            changed += update.executeUpdate();
          }
        }
      }
      assertEquals(1, changed, "the tool call of " + sessionId + " was found in the journal");
    }
  }
}
