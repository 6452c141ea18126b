package io.otl.persistence.golden;

import static org.junit.jupiter.api.Assertions.fail;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;

/**
 * The golden journals replayed on PostgreSQL (OTL_TEST_PG_URL, default the local {@code test}
 * database), each test in a fresh schema. Without PostgreSQL the tests are skipped loudly, unless
 * OTL_REQUIRE_PG is set, where they fail.
 */
class GoldenJournalReplayPostgresTest extends GoldenJournalReplayContract {
  private static final String PG_URL = env("OTL_TEST_PG_URL", "jdbc:postgresql://127.0.0.1:5432/test");
  private static final String PG_USER = env("OTL_TEST_PG_USER", "postgres");
  private static final String PG_PASSWORD = env("OTL_TEST_PG_PASSWORD", "");

  @Override
  protected Config database() {
    String schema = "otl_golden_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    try (Connection c = DriverManager.getConnection(PG_URL, PG_USER, PG_PASSWORD);
        Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA " + schema);
    } catch (SQLException e) {
      String message = "PostgreSQL is not reachable at " + PG_URL + " (" + e.getMessage() + ")";
      if (System.getenv("OTL_REQUIRE_PG") != null) fail(message + " and OTL_REQUIRE_PG is set");
      System.err.println("!!! SKIPPING PostgreSQL tests: " + message);
      Assumptions.abort(message);
    }
    return ConfigFactory.parseMap(Map.of(
        "agentscope.training.persistence", "postgres",
        "agentscope.training.db.url", PG_URL + (PG_URL.contains("?") ? "&" : "?") + "currentSchema=" + schema,
        "agentscope.training.db.user", PG_USER,
        "agentscope.training.db.password", PG_PASSWORD));
  }

  private static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? fallback : v;
  }
}
