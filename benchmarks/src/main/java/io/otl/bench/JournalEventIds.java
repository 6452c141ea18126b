package io.otl.bench;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;

/**
 * The event ids a session's journal rows hold, read straight from {@code event_journal} (the
 * payloads are JSON, docs/schema-evolution.md). R4 compares the producer's acknowledgements with
 * this, not only with a node's view of the session: a node that answers from an entity which missed
 * later writes (two clusters over one journal after a restart, issue #22 diagnosis) shows a session
 * short of events the journal does hold. Journal first tells "lost" from "not seen by that node".
 */
final class JournalEventIds {
  private JournalEventIds() {}

  /** Event ids in sequence order, duplicates kept (an event id stored twice shows twice). */
  static List<String> of(Pg pg, Pg.Schema schema, String sessionId) throws Exception {
    List<String> out = new ArrayList<>();
    try (Connection c = DriverManager.getConnection(schema.url(), pg.user, pg.password);
        PreparedStatement st = c.prepareStatement("SELECT event_payload FROM event_journal WHERE persistence_id = ? "
            + "AND NOT deleted ORDER BY sequence_number")) {
      st.setString(1, "AgentSession|" + sessionId);
      try (ResultSet rs = st.executeQuery()) {
        while (rs.next()) {
          JsonNode e = EventGen.JSON.readTree(new String(rs.getBytes(1), StandardCharsets.UTF_8));
          String id = e.path("eventId").asText("");
          // SessionStarted rows carry "start:<first event id>": not an event the client sent.
          if (!id.isEmpty() && !id.contains(":")) out.add(id);
        }
      }
    }
    return out;
  }
}
