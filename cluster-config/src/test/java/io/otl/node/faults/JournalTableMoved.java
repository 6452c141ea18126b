package io.otl.node.faults;

import io.otl.node.testing.TestDatabases;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * The journal table renamed away in a test's own PostgreSQL schema (an operator's migration, a schema
 * mix-up): the database answers, the journal does not. Closing puts the table back.
 */
final class JournalTableMoved implements AutoCloseable {
  private final String url;

  private JournalTableMoved(String url) {
    this.url = url;
  }

  static JournalTableMoved away(String url) throws SQLException {
    sql(url, "ALTER TABLE event_journal RENAME TO event_journal_moved");
    return new JournalTableMoved(url);
  }

  @Override
  public void close() throws SQLException {
    sql(url, "ALTER TABLE event_journal_moved RENAME TO event_journal");
  }

  private static void sql(String url, String statement) throws SQLException {
    try (Connection c = DriverManager.getConnection(url, TestDatabases.PG_USER, TestDatabases.PG_PASSWORD);
        Statement st = c.createStatement()) {
      st.execute(statement);
    }
  }
}
