package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import io.otl.core.api.DataCollector;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionInput;
import io.otl.core.session.SessionModel.Status;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.JournalSchema;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What the journal must guarantee for sessions, run once per database: state survives a full
 * stop and start of the node, duplicates are stored once, and no raw PII reaches the tables.
 */
abstract class SessionJournalContract {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final List<String> PII = List.of("13812345678", "+44 20 7946 0958", "110101199003077578",
      "alice@example.com", "11010119900307757X", "bob.smith@corp.cn");

  /** Node overrides selecting this contract's database; a fresh, empty journal each call. */
  protected abstract Config database() throws Exception;

  @Test
  void everySessionAnswersAsBeforeAfterTheNodeRestarts() throws Exception {
    Config db = database();
    Map<String, AgentSession.State> before = new LinkedHashMap<>();
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(db, false))) {
      DataCollector dc = node.dataCollector();
      List<CompletableFuture<?>> writes = new ArrayList<>();
      for (int i = 0; i < 30; i++) writes.add(scenario(dc, "restart-" + i, i).toCompletableFuture());
      CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
      // A long session crosses several snapshots (every 100 events).
      for (int batch = 0; batch < 25; batch++) {
        List<SessionInput> inputs = new ArrayList<>();
        for (int j = 0; j < 10; j++) inputs.add(new SessionInput.Message("m" + batch + "-" + j, null,
            j % 2 == 0 ? "user" : "assistant", "turn " + batch + "/" + j, null, 100L + j));
        dc.record("long-session", "agent-long", inputs).toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
      for (int i = 0; i < 30; i++) before.put("restart-" + i, trajectory(dc, "restart-" + i));
      before.put("long-session", trajectory(dc, "long-session"));
    }
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(db, false))) {
      DataCollector dc = node.dataCollector();
      for (var e : before.entrySet()) assertEquals(e.getValue(), trajectory(dc, e.getKey()), e.getKey());
      AgentSession.State completed = trajectory(dc, "restart-4");
      assertEquals(Status.COMPLETED, completed.status());
      assertEquals(250, trajectory(dc, "long-session").messages().size());
      // Replaying everything after the restart stores nothing twice.
      long rows = journalRows(node, "AgentSession|restart-");
      for (int i = 0; i < 30; i++) scenario(dc, "restart-" + i, i).toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertEquals(rows, journalRows(node, "AgentSession|restart-"));
    }
  }

  @Test
  void duplicateEventIdsAreStoredOnceInTheJournal() throws Exception {
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(database(), false))) {
      DataCollector dc = node.dataCollector();
      var m = new SessionInput.Message("dup-1", null, "user", "hello", null, null);
      var first = dc.record("dup-session", "agent-a", List.of(m, m, m)).toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertEquals(1, first.accepted());
      assertEquals(2, first.duplicates());
      var again = dc.record("dup-session", "agent-a", List.of(m)).toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertEquals(0, again.accepted());
      assertEquals(1, again.duplicates());
      // SessionStarted (implicit) + the one message
      assertEquals(2, journalRows(node, "AgentSession|dup-session"));
    }
  }

  @Test
  void noRawPersonalDataReachesTheJournalTables() throws Exception {
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(database(), false))) {
      DataCollector dc = node.dataCollector();
      for (int i = 0; i < 5; i++) {
        String s = "pii-" + i;
        dc.record(s, "agent-pii", List.of(
            new SessionInput.Start("st", null, "1", "v1", Map.of("owner", "alice@example.com")),
            new SessionInput.Message("m1", null, "user",
                "I am 110101199003077578, call 13812345678 or +44 20 7946 0958, mail alice@example.com", null, null),
            new SessionInput.ToolCall("t1", null, "c1", "crm",
                JSON.readTree("{\"email\":\"bob.smith@corp.cn\",\"id\":\"11010119900307757X\"}"),
                JSON.readTree("{\"phone\":\"13812345678\"}"), true, 20L),
            new SessionInput.Reasoning("r1", null, 0, "the user 13812345678", "lookup alice@example.com", "ok"),
            new SessionInput.Message("m2", null, "assistant", "Done, bob.smith@corp.cn notified", null, 900L),
            new SessionInput.Result("res", null, "SUCCESS", "mailed alice@example.com")))
            .toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
      List<String> payloads = payloads(node, "AgentSession|pii-");
      assertEquals(5 * 7, payloads.size(), "start, 5 inputs and the completion per session");
      for (String payload : payloads) {
        for (String pii : PII) assertFalse(payload.contains(pii), "raw " + pii + " in journal row: " + payload);
      }
      assertTrue(payloads.stream().anyMatch(p -> p.contains("[ID_CARD]") && p.contains("[PHONE]")));
      assertTrue(payloads.stream().anyMatch(p -> p.contains("[EMAIL]")));
    }
  }

  private static java.util.concurrent.CompletionStage<?> scenario(DataCollector dc, String session, int i)
      throws Exception {
    List<SessionInput> inputs = new ArrayList<>(List.of(
        new SessionInput.Start("start", null, "1.0", "v" + (i % 3), Map.of("n", String.valueOf(i))),
        new SessionInput.Message("u1", null, "user", "question " + i, null, null),
        new SessionInput.ToolCall("t1", null, "call-1", "search", JSON.readTree("{\"q\":" + i + "}"),
            JSON.readTree("{\"hits\":[1,2]}"), i % 4 != 0, 30L),
        new SessionInput.Reasoning("r1", null, 0, "think " + i, "act", "observe"),
        new SessionInput.Message("a1", null, "assistant", "answer " + i, "chatcmpl-" + i, 500L + i),
        new SessionInput.Feedback("f1", null, i % 2 == 0 ? "THUMBS_UP" : "RATING", i % 2 == 0 ? null : 4.0,
            "fb-" + i, "web")));
    if (i % 3 != 0) inputs.add(new SessionInput.Result("res", null, i % 5 == 0 ? "FAILURE" : "SUCCESS", "r"));
    return dc.record(session, "agent-" + (i % 2), inputs);
  }

  private static AgentSession.State trajectory(DataCollector dc, String session) throws Exception {
    return dc.trajectory(session).toCompletableFuture().get(30, TimeUnit.SECONDS).orElseThrow();
  }

  static long journalRows(TrainingNode node, String persistenceIdPrefix) throws Exception {
    try (Connection c = JournalSchema.connect(node.journal());
        PreparedStatement ps = c.prepareStatement(
            "SELECT COUNT(*) FROM event_journal WHERE persistence_id LIKE ?")) {
      ps.setString(1, persistenceIdPrefix + "%");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  /** Decoded payloads of the journal and snapshot rows of matching entities. */
  static List<String> payloads(TrainingNode node, String persistenceIdPrefix) throws Exception {
    List<String> out = new ArrayList<>();
    try (Connection c = JournalSchema.connect(node.journal())) {
      for (String sql : List.of("SELECT event_payload FROM event_journal WHERE persistence_id LIKE ?",
          "SELECT snapshot_payload FROM snapshot WHERE persistence_id LIKE ?")) {
        try (PreparedStatement ps = c.prepareStatement(sql)) {
          ps.setString(1, persistenceIdPrefix + "%");
          try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) out.add(new String(rs.getBytes(1), StandardCharsets.UTF_8));
          }
        }
      }
    }
    return out;
  }
}
