package io.otl.persistence;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.pekko.persistence.jdbc.config.EventJournalTableColumnNames;
import org.apache.pekko.persistence.jdbc.config.EventTagTableColumnNames;
import org.apache.pekko.persistence.jdbc.config.JournalConfig;
import org.apache.pekko.persistence.jdbc.journal.dao.DefaultJournalDao;
import org.apache.pekko.persistence.jdbc.journal.dao.JournalTables.JournalPekkoSerializationRow;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.stream.Materializer;
import scala.Option;
import scala.Tuple2;
import scala.collection.immutable.Seq;
import scala.collection.immutable.Set;
import scala.concurrent.ExecutionContext;
import scala.concurrent.Future;
import scala.runtime.BoxedUnit;
import slick.dbio.DBIOAction;
import slick.jdbc.JdbcBackend;
import slick.jdbc.JdbcProfile;
import slick.jdbc.PostgresProfile;
import slick.jdbc.SimpleJdbcAction;

/**
 * pekko-persistence-jdbc's journal DAO with one write changed, on PostgreSQL only: a write batch
 * holding a tagged event. The stock DAO inserts such a batch through Slick's {@code returning}
 * insert (it needs each row's {@code ordering} for the tag rows), and Slick 3.5 runs that one row
 * per statement, each a round trip to the database, so one tagged event (a session's
 * {@code TrajectoryCompleted}, ~1 row in 20) made the whole batch of up to {@code batchSize} rows
 * go row by row. W2's profile (issue #18): ~60 % of the driver's CPU was those single-row inserts.
 *
 * <p>Here the rows go as one JDBC batch with generated keys (pgjdbc sends them in one round
 * trip), in the same order (by sequence number, as the stock DAO sorts them), in one transaction
 * with the tag rows, so the rows, their orderings' order and the tags are what the stock DAO
 * writes. Each tag finds its row's ordering by persistence id and sequence number, not by the
 * position of the returned keys. Untagged batches and other databases (H2) take the stock path.
 */
public class TaggedBatchJournalDao extends DefaultJournalDao {
  private final boolean postgres;
  private final String insertRow;
  private final String[] returned;
  private final String insertTag;

  public TaggedBatchJournalDao(JdbcBackend.JdbcDatabaseDef db, JdbcProfile profile, JournalConfig journalConfig,
      Serialization serialization, ExecutionContext ec, Materializer mat) {
    super(db, profile, journalConfig, serialization, ec, mat);
    this.postgres = profile instanceof PostgresProfile;
    var journal = journalConfig.eventJournalTableConfiguration();
    EventJournalTableColumnNames c = journal.columnNames();
    this.insertRow = "insert into " + table(journal.schemaName(), journal.tableName()) + " ("
        + String.join(",", q(c.deleted()), q(c.persistenceId()), q(c.sequenceNumber()), q(c.writer()),
            q(c.writeTimestamp()), q(c.adapterManifest()), q(c.eventPayload()), q(c.eventSerId()),
            q(c.eventSerManifest()), q(c.metaPayload()), q(c.metaSerId()), q(c.metaSerManifest()))
        + ") values (?,?,?,?,?,?,?,?,?,?,?,?)";
    this.returned = new String[] {c.ordering(), c.persistenceId(), c.sequenceNumber()};
    var tags = journalConfig.eventTagTableConfiguration();
    EventTagTableColumnNames t = tags.columnNames();
    this.insertTag = "insert into " + table(tags.schemaName(), tags.tableName()) + " (" + q(t.eventId()) + ","
        + q(t.tag()) + ") values (?,?)";
  }

  @Override
  public Future<BoxedUnit> writeJournalRows(Seq<Tuple2<JournalPekkoSerializationRow, Set<String>>> xs) {
    if (!postgres || !xs.exists(x -> x._2().nonEmpty())) return super.writeJournalRows(xs);
    List<Tuple2<JournalPekkoSerializationRow, Set<String>>> rows = new ArrayList<>(xs.size());
    xs.foreach(rows::add);
    // stable, like Scala's sortBy in the stock DAO: rows of one sequence number keep their order
    rows.sort(Comparator.comparingLong(x -> x._1().sequenceNumber()));
    SimpleJdbcAction<BoxedUnit> action = new SimpleJdbcAction<>(ctx -> {
      write(ctx.connection(), rows);
      return BoxedUnit.UNIT;
    });
    return run(action);
  }

  /** Scala's variance (the action's effect type) has no Java spelling: a raw call states what Scala checks. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private Future<BoxedUnit> run(SimpleJdbcAction<BoxedUnit> action) {
    return (Future<BoxedUnit>) db().run((DBIOAction) action);
  }

  private void write(Connection connection, List<Tuple2<JournalPekkoSerializationRow, Set<String>>> rows) {
    try {
      boolean autoCommit = connection.getAutoCommit();
      if (autoCommit) connection.setAutoCommit(false);
      try {
        Map<String, Long> orderings = insertRows(connection, rows);
        insertTags(connection, rows, orderings);
        connection.commit();
      } catch (SQLException | RuntimeException e) {
        connection.rollback();
        throw e;
      } finally {
        if (autoCommit) connection.setAutoCommit(true);
      }
    } catch (SQLException e) {
      throw sneaky(e);
    }
  }

  private Map<String, Long> insertRows(Connection connection,
      List<Tuple2<JournalPekkoSerializationRow, Set<String>>> rows) throws SQLException {
    Map<String, Long> orderings = new HashMap<>(rows.size() * 2);
    try (PreparedStatement ps = connection.prepareStatement(insertRow, returned)) {
      for (var x : rows) {
        JournalPekkoSerializationRow r = x._1();
        ps.setBoolean(1, r.deleted());
        ps.setString(2, r.persistenceId());
        ps.setLong(3, r.sequenceNumber());
        ps.setString(4, r.writer());
        ps.setLong(5, r.writeTimestamp());
        ps.setString(6, r.adapterManifest());
        ps.setBytes(7, r.eventPayload());
        ps.setInt(8, r.eventSerId());
        ps.setString(9, r.eventSerManifest());
        Option<byte[]> meta = r.metaPayload();
        if (meta.isDefined()) ps.setBytes(10, meta.get()); else ps.setNull(10, Types.BINARY);
        Option<Object> metaSerId = r.metaSerId();
        if (metaSerId.isDefined()) ps.setInt(11, (Integer) metaSerId.get()); else ps.setNull(11, Types.INTEGER);
        Option<String> metaManifest = r.metaSerManifest();
        if (metaManifest.isDefined()) ps.setString(12, metaManifest.get()); else ps.setNull(12, Types.VARCHAR);
        ps.addBatch();
      }
      ps.executeBatch();
      try (ResultSet keys = ps.getGeneratedKeys()) {
        while (keys.next()) orderings.put(key(keys.getString(2), keys.getLong(3)), keys.getLong(1));
      }
    }
    return orderings;
  }

  private void insertTags(Connection connection, List<Tuple2<JournalPekkoSerializationRow, Set<String>>> rows,
      Map<String, Long> orderings) throws SQLException {
    try (PreparedStatement ps = connection.prepareStatement(insertTag)) {
      for (var x : rows) {
        if (x._2().isEmpty()) continue;
        JournalPekkoSerializationRow r = x._1();
        Long ordering = orderings.get(key(r.persistenceId(), r.sequenceNumber()));
        if (ordering == null) {
          throw new SQLException("the journal returned no ordering for " + r.persistenceId() + " #" + r.sequenceNumber());
        }
        var tags = x._2().iterator();
        while (tags.hasNext()) {
          ps.setLong(1, ordering);
          ps.setString(2, tags.next());
          ps.addBatch();
        }
      }
      ps.executeBatch();
    }
  }

  private static String key(String persistenceId, long sequenceNumber) {
    return sequenceNumber + ":" + persistenceId;
  }

  /** Quoted as Slick's PostgreSQL profile quotes them, so the names mean the same table and columns. */
  private static String q(String name) {
    return '"' + name.replace("\"", "\"\"") + '"';
  }

  private static String table(Option<String> schema, String name) {
    return schema.isDefined() ? q(schema.get()) + "." + q(name) : q(name);
  }

  /** The driver's exception as it is, failing the journal's future as Slick's own insert would. */
  @SuppressWarnings("unchecked")
  private static <E extends Throwable> RuntimeException sneaky(Throwable e) throws E {
    throw (E) e;
  }
}
