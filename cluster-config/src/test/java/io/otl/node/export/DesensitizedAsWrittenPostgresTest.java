package io.otl.node.export;

import com.typesafe.config.Config;
import io.otl.node.testing.TestDatabases;

/** Desensitizing as written on PostgreSQL (OTL_TEST_PG_URL), each test in a fresh schema. */
class DesensitizedAsWrittenPostgresTest extends DesensitizedAsWrittenContract {
  @Override
  protected Config database() {
    return TestDatabases.postgres();
  }
}
