package io.otl.persistence;

import com.zaxxer.hikari.HikariDataSource;
import io.otl.core.api.SessionOwners;
import io.otl.core.session.AgentSession;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;

/**
 * A session's owner from its first event, by one read of the journal's primary key
 * (persistence_id, sequence_number = 1). A session's first event is always its {@link
 * AgentSession.SessionStarted}, which names the agent.
 *
 * <p>Its own small connection pool: the journal's pool serves writes and recoveries, and a check
 * that waits behind them would put the journal's queue back on the gateway's critical path. A
 * connection per check (as {@link JournalDirectory} does for its rare reads) would cost more than
 * the check.
 */
public final class JournalSessionOwners implements SessionOwners, AutoCloseable {
  private static final String QUERY = "SELECT event_ser_id, event_ser_manifest, event_payload FROM event_journal "
      + "WHERE persistence_id = ? AND sequence_number = 1";

  private final HikariDataSource pool;
  private final Serialization serialization;
  private final Executor executor;

  /**
   * @param connections at most this many connections; a check holds one for a single indexed read
   * @param executor where the (blocking) reads run
   */
  public JournalSessionOwners(JournalSettings settings, org.apache.pekko.actor.ActorSystem system, int connections,
      Executor executor) {
    // One connection kept: checks come with gateway calls, and should not wait for a connect.
    this.pool = ReadOnlyPool.of("session-owners", settings, connections, 1);
    this.serialization = SerializationExtension.get(system);
    this.executor = executor;
  }

  @Override
  public CompletionStage<Optional<Owner>> ownerOf(String sessionId) {
    return CompletableFuture.supplyAsync(() -> read(AgentSession.persistenceId(sessionId).id()), executor);
  }

  private Optional<Owner> read(String persistenceId) {
    try (Connection conn = pool.getConnection(); PreparedStatement ps = conn.prepareStatement(QUERY)) {
      ps.setString(1, persistenceId);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) return Optional.empty();
        Object first = serialization.deserialize(rs.getBytes(3), rs.getInt(1), rs.getString(2)).get();
        if (first instanceof AgentSession.SessionStarted s) {
          return s.agentId() == null ? Optional.empty() : Optional.of(new Owner(s.agentId(), s.modelVersion()));
        }
        throw new IllegalStateException("the first event of " + persistenceId + " is a "
            + first.getClass().getSimpleName() + ", not a SessionStarted");
      }
    } catch (SQLException e) {
      throw new IllegalStateException("session owner lookup failed: " + e.getMessage(), e);
    }
  }

  @Override
  public void close() {
    pool.close();
  }
}
