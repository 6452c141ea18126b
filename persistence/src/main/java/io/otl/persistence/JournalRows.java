package io.otl.persistence;

import com.typesafe.config.Config;
import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.AbstractExtensionId;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Extension;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.stream.javadsl.Source;

/**
 * Finished reads of one entity's journal straight from the journal table, for the audit and
 * export paths. pekko-persistence-jdbc's {@code currentEventsByPersistenceId} sets up a Slick
 * stream, its batching stage and a flow per query; for the short journals of sessions that set-up
 * cost more than the rows (benchmarks W6). Here a window is one {@code SELECT} ordered by sequence
 * number, deleted rows skipped, the same {@code max-buffer-size} rows per query, and each row
 * decoded as the read journal decodes it ({@link JournalRowDecoder}), so results are the same event
 * by event (JournalRowsEquivalence tests, golden journals included).
 *
 * <p>One per actor system (an extension): its own small pool and threads, so a long export never
 * waits behind, nor delays, the journal's writes and recoveries in the shared pool; the threads
 * equal the connections, so requests queue here and never time out waiting for a connection.
 * Connection settings, table and schema are the read journal's own ({@code jdbc-read-journal}).
 */
public final class JournalRows implements Extension {
  /** Connections and reader threads: the export's default parallelism; audits are rare. */
  static final int CONNECTIONS = 4;

  private static final Id ID = new Id();

  private final HikariDataSource pool;
  private final ExecutorService executor;
  private final JournalRowDecoder decoder;
  private final String windowSql;
  private final String lastSql;
  /** Rows per query: the read journal's max-buffer-size, so both paths hold as much in memory. */
  private final int window;

  private JournalRows(ExtendedActorSystem system) {
    Config root = system.settings().config();
    Config rj = root.getConfig("jdbc-read-journal");
    String shared = rj.hasPath("use-shared-db") ? rj.getString("use-shared-db") : "";
    Config db = shared.isEmpty() ? rj.getConfig("slick.db")
        : root.getConfig("pekko-persistence-jdbc.shared-databases." + shared + ".db");
    // No idle connection kept: audits and exports are rare.
    this.pool = ReadOnlyPool.of("journal-rows", db, CONNECTIONS, 0);
    AtomicInteger n = new AtomicInteger();
    this.executor = Executors.newFixedThreadPool(CONNECTIONS, r -> {
      Thread t = new Thread(r, "journal-rows-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
    this.decoder = new JournalRowDecoder(system);
    this.window = Integer.parseInt(rj.getString("max-buffer-size"));
    String table = table(rj);
    this.windowSql = "SELECT \"ordering\", \"sequence_number\", \"write_timestamp\", \"adapter_manifest\","
        + " \"event_ser_id\", \"event_ser_manifest\", \"event_payload\", \"meta_ser_id\", \"meta_ser_manifest\","
        + " \"meta_payload\" FROM " + table + " WHERE \"persistence_id\" = ? AND \"deleted\" = false"
        + " AND \"sequence_number\" >= ? AND \"sequence_number\" <= ? ORDER BY \"sequence_number\" LIMIT ?";
    this.lastSql = "SELECT max(\"sequence_number\") FROM " + table
        + " WHERE \"persistence_id\" = ? AND \"deleted\" = false";
    system.registerOnTermination(() -> {
      executor.shutdownNow();
      pool.close();
    });
  }

  /** Quoted like Slick quotes them, so the same names work on PostgreSQL and on H2 in any case mode. */
  private static String table(Config rj) {
    Config t = rj.getConfig("tables.event_journal");
    String schema = t.hasPath("schemaName") ? t.getString("schemaName") : "";
    return (schema.isEmpty() ? "" : "\"" + schema + "\".") + "\"" + t.getString("tableName") + "\"";
  }

  public static JournalRows get(org.apache.pekko.actor.typed.ActorSystem<?> system) {
    return ID.get(system.classicSystem());
  }

  /**
   * One stored row: its envelopes, or why it could not be decoded (never a database failure: those
   * fail the read).
   */
  public record Row(String persistenceId, long sequenceNr, List<EventEnvelope> envelopes, Throwable failure) {}

  /**
   * Every row of {@code persistenceId} from {@code fromSeqNr} on, in sequence-number order, one
   * window per query: constant memory whatever the length. The first window is not bounded (most
   * journals fit in it, one query); when it is full, the rest is read up to the highest sequence
   * number the journal has then, so a live entity's new events do not make the read endless.
   */
  public Source<Row, NotUsed> rows(String persistenceId, long fromSeqNr) {
    record Cursor(long next, long to, boolean done) {
      Cursor finished() {
        return new Cursor(next, to, true);
      }
    }
    return Source.unfoldAsync(new Cursor(Math.max(1, fromSeqNr), Long.MAX_VALUE, false), c -> {
      if (c.done() || c.next() > c.to()) {
        return CompletableFuture.completedFuture(Optional.<Pair<Cursor, List<Row>>>empty());
      }
      return window(persistenceId, c.next(), c.to()).thenCompose(rows -> {
        if (rows.size() < window) {
          return CompletableFuture.completedFuture(Optional.of(Pair.create(c.finished(), rows)));
        }
        long next = rows.get(rows.size() - 1).sequenceNr() + 1;
        CompletionStage<Long> to = c.to() != Long.MAX_VALUE ? CompletableFuture.completedFuture(c.to())
            : lastSeqNr(persistenceId);
        return to.thenApply(last -> Optional.of(Pair.create(new Cursor(next, last, false), rows)));
      });
    }).mapConcat(rows -> rows);
  }

  /**
   * The events of {@code persistenceId} from {@code fromSeqNr} on; fails at the first row that
   * cannot be decoded, as the read journal's stream does.
   */
  public Source<EventEnvelope, NotUsed> events(String persistenceId, long fromSeqNr) {
    return rows(persistenceId, fromSeqNr).mapConcat(r -> {
      if (r.failure() == null) return r.envelopes();
      throw r.failure() instanceof RuntimeException e ? e : new CompletionException(r.failure());
    });
  }

  /** The rows {@code from..to} of {@code persistenceId}, at most one window of them. */
  public CompletionStage<List<Row>> window(String persistenceId, long from, long to) {
    return CompletableFuture.supplyAsync(() -> {
      List<JournalRowDecoder.Stored> stored = select(persistenceId, from, to);
      // Decoded after the connection is back in the pool: it is not needed for that.
      List<Row> out = new ArrayList<>(stored.size());
      for (JournalRowDecoder.Stored s : stored) {
        try {
          out.add(new Row(persistenceId, s.sequenceNr(), decoder.decode(s), null));
        } catch (Exception e) { // Try.get() rethrows checked exceptions too (NotSerializableException)
          out.add(new Row(persistenceId, s.sequenceNr(), List.of(), e));
        }
      }
      return out;
    }, executor);
  }

  /** The highest sequence number of a row not deleted; 0 when there is none. */
  public CompletionStage<Long> lastSeqNr(String persistenceId) {
    return CompletableFuture.supplyAsync(() -> {
      try (Connection conn = pool.getConnection(); PreparedStatement ps = conn.prepareStatement(lastSql)) {
        ps.setString(1, persistenceId);
        try (ResultSet rs = ps.executeQuery()) {
          return rs.next() ? rs.getLong(1) : 0L;
        }
      } catch (SQLException e) {
        throw failure(persistenceId, e);
      }
    }, executor);
  }

  private List<JournalRowDecoder.Stored> select(String pid, long from, long to) {
    try (Connection conn = pool.getConnection(); PreparedStatement ps = conn.prepareStatement(windowSql)) {
      ps.setString(1, pid);
      ps.setLong(2, from);
      ps.setLong(3, to);
      ps.setInt(4, window);
      List<JournalRowDecoder.Stored> out = new ArrayList<>();
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          int metaId = rs.getInt(8);
          Integer metaSerId = rs.wasNull() ? null : metaId;
          out.add(new JournalRowDecoder.Stored(pid, rs.getLong(2), rs.getLong(1), rs.getLong(3), rs.getString(4),
              rs.getInt(5), rs.getString(6), rs.getBytes(7), metaSerId, rs.getString(9), rs.getBytes(10)));
        }
      }
      return out;
    } catch (SQLException e) {
      throw failure(pid, e);
    }
  }

  /** Keeps the SQLException as the cause: callers tell a database failure from a bad row by it. */
  private static CompletionException failure(String pid, SQLException e) {
    return new CompletionException(new SQLException("reading the journal of " + pid + " failed: " + e.getMessage(),
        e.getSQLState(), e));
  }

  private static final class Id extends AbstractExtensionId<JournalRows> {
    @Override
    public JournalRows createExtension(ExtendedActorSystem system) {
      return new JournalRows(system);
    }
  }
}
