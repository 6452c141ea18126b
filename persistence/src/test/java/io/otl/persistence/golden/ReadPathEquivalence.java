package io.otl.persistence.golden;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.otl.persistence.JournalRows;
import io.otl.persistence.audit.AuditReader;
import io.otl.persistence.audit.UnreadableEvent;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;

/**
 * The audit and export read ({@link JournalRows}, through {@link AuditReader#events}) gives what
 * pekko-persistence-jdbc's read journal gives, envelope by envelope: offset, ids, write time,
 * metadata and the deserialized event (its class, equality where it has one, and its rendering).
 */
final class ReadPathEquivalence {
  private ReadPathEquivalence() {}

  /** A long journal (three windows, a deleted row) and a poisoned one, made of a fixture's first session row. */
  static List<GoldenFiles.Fixture> synthetic(GoldenFiles.Fixture sessions) {
    GoldenFiles.Row r = sessions.rows().get(0);
    List<GoldenFiles.Row> rows = new ArrayList<>();
    for (long n = 1; n <= 1203; n++) {
      rows.add(new GoldenFiles.Row("AgentSession|golden-many", n, n == 700, r.serializerId(), r.manifest(),
          r.adapterManifest(), List.of(), r.payload()));
    }
    for (long n = 1; n <= 5; n++) {
      byte[] payload = n == 3 ? "{\"not\": an event".getBytes(StandardCharsets.UTF_8) : r.payload();
      rows.add(new GoldenFiles.Row("AgentSession|golden-poisoned", n, false, r.serializerId(), r.manifest(),
          r.adapterManifest(), List.of(), payload));
    }
    return List.of(new GoldenFiles.Fixture("synthetic", "AgentSession", rows, List.of(), Map.of()));
  }

  /** Every persistence id of {@code fixtures} read through both paths; the poisoned one apart. */
  static void check(ActorSystem<?> system, Config training, List<GoldenFiles.Fixture> fixtures, String where)
      throws Exception {
    JdbcReadJournal journal = PersistenceQuery.get(system)
        .getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
    AuditReader audit = AuditReader.fromConfig(system, training);
    Set<String> pids = new LinkedHashSet<>();
    for (GoldenFiles.Fixture f : fixtures) for (GoldenFiles.Row r : f.rows()) pids.add(r.persistenceId());
    int compared = 0;
    for (String pid : pids) {
      if (pid.equals("AgentSession|golden-poisoned")) {
        poisoned(system, journal, audit, pid, where);
        continue;
      }
      List<EventEnvelope> expected = run(system, journal.currentEventsByPersistenceId(pid, 0L, Long.MAX_VALUE));
      assertSame(system, expected, run(system, audit.events(pid, 1)), where + " " + pid + " (audit)");
      assertSame(system, expected, run(system, JournalRows.get(system).events(pid, 0)), where + " " + pid + " (rows)");
      // A page's read starts in the middle.
      List<EventEnvelope> tail = run(system, journal.currentEventsByPersistenceId(pid, 2L, Long.MAX_VALUE));
      assertSame(system, tail, run(system, audit.events(pid, 2)), where + " " + pid + " from 2");
      compared += expected.size();
    }
    assertTrue(compared > 0, where + ": nothing compared");
  }

  /**
   * The read journal fails at the bad row; the audit shows it as an UnreadableEvent in its place
   * (what it showed before, reading such a window event by event) and the export's read fails with
   * the same cause.
   */
  private static void poisoned(ActorSystem<?> system, JdbcReadJournal journal, AuditReader audit, String pid,
      String where) throws Exception {
    List<EventEnvelope> expected = new ArrayList<>(run(system, journal.currentEventsByPersistenceId(pid, 1L, 2L)));
    expected.addAll(run(system, journal.currentEventsByPersistenceId(pid, 4L, Long.MAX_VALUE)));
    List<EventEnvelope> got = run(system, audit.events(pid, 1));
    assertEquals(5, got.size(), where);
    UnreadableEvent u = assertInstanceOf(UnreadableEvent.class, got.get(2).event(), where);
    assertEquals(3, u.seqNr());
    List<EventEnvelope> readable = new ArrayList<>(got);
    readable.remove(2);
    assertSame(system, expected, readable, where + " " + pid);
    Throwable viaJournal = failure(system, journal.currentEventsByPersistenceId(pid, 0L, Long.MAX_VALUE));
    Throwable viaRows = failure(system, JournalRows.get(system).events(pid, 0));
    assertEquals(root(viaJournal).getClass(), root(viaRows).getClass(), where + " " + pid);
  }

  private static void assertSame(ActorSystem<?> system, List<EventEnvelope> expected, List<EventEnvelope> got,
      String where) {
    assertEquals(expected.size(), got.size(), where + ": number of events");
    for (int i = 0; i < expected.size(); i++) {
      EventEnvelope a = expected.get(i);
      EventEnvelope b = got.get(i);
      String at = where + " #" + a.sequenceNr();
      assertEquals(a.offset(), b.offset(), at);
      assertEquals(a.persistenceId(), b.persistenceId(), at);
      assertEquals(a.sequenceNr(), b.sequenceNr(), at);
      assertEquals(a.timestamp(), b.timestamp(), at);
      assertEquals(a.eventMetadata(), b.eventMetadata(), at);
      assertEquals(a.event().getClass(), b.event().getClass(), at);
      if (a.event().getClass().isRecord()) assertEquals(a.event(), b.event(), at);
      assertEquals(GoldenNode.render(system, a.event()), GoldenNode.render(system, b.event()), at);
    }
  }

  private static List<EventEnvelope> run(ActorSystem<?> system, Source<EventEnvelope, ?> s) throws Exception {
    return s.runWith(Sink.seq(), system).toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  private static Throwable failure(ActorSystem<?> system, Source<EventEnvelope, ?> s) {
    return assertThrows(ExecutionException.class, () -> run(system, s)).getCause();
  }

  private static Throwable root(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null && c.getCause() != c) c = c.getCause();
    return c;
  }
}
