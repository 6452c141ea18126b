package io.otl.node;

import com.typesafe.config.Config;
import io.otl.node.testing.TestDatabases;

/** The session journal contract on PostgreSQL (OTL_TEST_PG_URL), each test in a fresh schema. */
class SessionJournalPostgresTest extends SessionJournalContract {
  @Override
  protected Config database() {
    return TestDatabases.postgres();
  }
}
