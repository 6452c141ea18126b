package io.otl.node.readside;

import com.typesafe.config.Config;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.JournalSettings;

/** The trajectory feed on PostgreSQL (OTL_TEST_PG_URL), each test in a fresh schema. */
class TrajectoryFeedPostgresTest extends TrajectoryFeedContract {
  @Override
  protected Config database() {
    return TestDatabases.postgres();
  }

  @Override
  protected void skipOrderings(JournalSettings journal, long next) {
    FeedTestSupport.execute(journal,
        "SELECT setval(pg_get_serial_sequence('event_journal', 'ordering'), " + (next - 1) + ")");
  }
}
