package io.otl.node.export;

import com.typesafe.config.Config;
import io.otl.node.testing.TestDatabases;

/** Dataset export on PostgreSQL (OTL_TEST_PG_URL), each test in a fresh schema. */
class DatasetExportPostgresTest extends DatasetExportContract {
  @Override
  protected Config database() {
    return TestDatabases.postgres();
  }
}
