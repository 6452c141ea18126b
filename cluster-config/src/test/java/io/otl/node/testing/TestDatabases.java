package io.otl.node.testing;

import static org.junit.jupiter.api.Assertions.fail;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Assumptions;

/**
 * Journal databases for tests: a fresh H2 file, or a fresh schema in the PostgreSQL named by
 * OTL_TEST_PG_URL (default the local {@code test} database). Without a reachable PostgreSQL the
 * tests are skipped loudly, unless OTL_REQUIRE_PG is set (as in CI), where they fail.
 */
public final class TestDatabases {
  public static final String PG_URL = env("OTL_TEST_PG_URL", "jdbc:postgresql://127.0.0.1:5432/test");
  public static final String PG_USER = env("OTL_TEST_PG_USER", "postgres");
  public static final String PG_PASSWORD = env("OTL_TEST_PG_PASSWORD", "");

  private TestDatabases() {}

  private static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? fallback : v;
  }

  /** Node overrides for a journal in a new H2 file under {@code dir}. */
  public static Config h2(Path dir) {
    String url = "jdbc:h2:file:" + dir.resolve("journal").toAbsolutePath()
        + ";DATABASE_TO_UPPER=false;WRITE_DELAY=0";
    return ConfigFactory.parseMap(Map.of(
        "agentscope.training.persistence", "h2",
        "agentscope.training.db.url", url));
  }

  /**
   * Writes {@code file}: the command-line tools' {@code --config} for the H2 journal of {@code h2}
   * (from {@link #h2}), with {@code settings} (HOCON lines) beside it under agentscope.training.
   */
  public static Path toolsConfig(Config h2, Path file, String... settings) {
    StringBuilder conf = new StringBuilder("agentscope.training {\n  persistence = h2\n  db.url = \"")
        .append(h2.getString("agentscope.training.db.url")).append("\"\n");
    for (String setting : settings) conf.append("  ").append(setting).append('\n');
    try {
      return java.nio.file.Files.writeString(file, conf.append("}\n"));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Node overrides for a journal in a new PostgreSQL schema; skips or fails without PostgreSQL. */
  public static Config postgres() {
    requirePostgres();
    String schema = "otl_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
    try (Connection c = DriverManager.getConnection(PG_URL, PG_USER, PG_PASSWORD);
        Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA " + schema);
    } catch (SQLException e) {
      fail("cannot create schema in " + PG_URL + ": " + e.getMessage());
    }
    String url = PG_URL + (PG_URL.contains("?") ? "&" : "?") + "currentSchema=" + schema;
    return ConfigFactory.parseMap(Map.of(
        "agentscope.training.persistence", "postgres",
        "agentscope.training.db.url", url,
        "agentscope.training.db.user", PG_USER,
        "agentscope.training.db.password", PG_PASSWORD));
  }

  public static void requirePostgres() {
    try (Connection c = DriverManager.getConnection(PG_URL, PG_USER, PG_PASSWORD)) {
      c.isValid(2);
    } catch (SQLException e) {
      String message = "PostgreSQL is not reachable at " + PG_URL + " (" + e.getMessage() + ")";
      if (System.getenv("OTL_REQUIRE_PG") != null) fail(message + " and OTL_REQUIRE_PG is set");
      System.err.println("!!! SKIPPING PostgreSQL tests: " + message);
      Assumptions.abort(message);
    }
  }

  /**
   * Config for a test node: HTTP on a free port (or off), cluster port chosen by the OS, and every
   * directory the node writes to under a fresh dir in {@code target/}: the defaults are relative to
   * the working directory, which under Maven is the module's source tree.
   */
  public static Config node(Config db, boolean http) {
    Path out = outputDir("node");
    return db.withFallback(ConfigFactory.parseMap(Map.of(
        "pekko.remote.artery.canonical.port", 0,
        "agentscope.training.http.enabled", http,
        "agentscope.training.http.port", 0,
        "agentscope.training.http.host", "127.0.0.1",
        "agentscope.training.simulator.enabled", false,
        "agentscope.training.training-runner.dataset-dir", out.resolve("datasets").toString(),
        "agentscope.training.training-runner.checkpoint-root-dir", out.resolve("checkpoints").toString(),
        "agentscope.training.data-collector.store-path", out.resolve("trajectories").toString(),
        "agentscope.training.simulator.work-dir", out.resolve("simulator").toString())));
  }

  /**
   * A new directory under {@code target/test-output/} for one test's files, named with letters only:
   * a temp directory's random 19-digit number is a card number by issuer prefix and Luhn about once
   * in 40 names, and a version registered with an artifact under it was refused as personal data
   * (a CI run of ConsoleLateFeedbackBrowserTest).
   */
  public static Path outputDir(String prefix) {
    Path root = Path.of("target", "test-output").toAbsolutePath();
    java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
    try {
      java.nio.file.Files.createDirectories(root);
      while (true) {
        StringBuilder name = new StringBuilder(prefix).append('-');
        for (int i = 0; i < 12; i++) name.append((char) ('a' + random.nextInt(26)));
        try {
          return java.nio.file.Files.createDirectory(root.resolve(name.toString()));
        } catch (java.nio.file.FileAlreadyExistsException taken) {
          // another test took this name: draw again
        }
      }
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
