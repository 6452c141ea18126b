package io.otl.bench;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.persistence.JournalSchema;
import io.otl.persistence.JournalSettings;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The benchmark database: by default a PostgreSQL cluster of its own (port 5433, database
 * {@code bench}, see BENCHMARKS.md), so that benchmarks never load, and the outage drill never
 * stops, the database other people's tests use. Every workload writes into a fresh schema.
 */
final class Pg {
  final String baseUrl;
  final String user;
  final String password;

  Pg(Args args) {
    this.baseUrl = args.string("pg-url", env("OTL_BENCH_PG_URL", "jdbc:postgresql://127.0.0.1:5433/bench"));
    this.user = args.string("pg-user", env("OTL_BENCH_PG_USER", "postgres"));
    this.password = args.string("pg-password", env("OTL_BENCH_PG_PASSWORD", ""));
  }

  private static String env(String name, String fallback) {
    String v = System.getenv(name);
    return v == null || v.isBlank() ? fallback : v;
  }

  Connection connect() throws SQLException {
    return DriverManager.getConnection(baseUrl, user, password);
  }

  /** Creates {@code prefix_<random>} and returns the JDBC URL whose current schema it is. */
  Schema freshSchema(String prefix) {
    String schema = prefix + "_" + UUID.randomUUID().toString().replace("-", "").substring(0, 10);
    try (Connection c = connect(); Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA " + schema);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot create schema " + schema + " in " + baseUrl + ": " + e.getMessage()
          + " (start the benchmark PostgreSQL, see BENCHMARKS.md, or pass --pg-url)", e);
    }
    return new Schema(schema, withParam(baseUrl, "currentSchema=" + schema));
  }

  /** An existing schema by name (created when missing). */
  Schema namedSchema(String schema) {
    try (Connection c = connect(); Statement st = c.createStatement()) {
      st.execute("CREATE SCHEMA IF NOT EXISTS " + schema);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot create schema " + schema + ": " + e.getMessage(), e);
    }
    return new Schema(schema, withParam(baseUrl, "currentSchema=" + schema));
  }

  void dropSchema(Schema s) {
    try (Connection c = connect(); Statement st = c.createStatement()) {
      st.execute("DROP SCHEMA IF EXISTS " + s.name() + " CASCADE");
    } catch (SQLException e) {
      System.err.println("could not drop schema " + s.name() + ": " + e.getMessage());
    }
  }

  /**
   * Gives the planner statistics of a schema's journal, as autovacuum does within its first minute
   * (autovacuum_naptime) of a deployment. Without them, Pekko's gap-free-ordering query ({@code ordering
   * > ? ORDER BY ordering LIMIT ?}, every journal-sequence-retrieval.query-delay) was planned as a
   * sequential scan and sort of the whole journal, a third of PostgreSQL's CPU in a 16 s W1 run: a cost
   * of a fresh table that a running deployment does not have (BENCHMARKS.md, session 24).
   */
  void analyze(Schema s) {
    try (Connection c = connect(); Statement st = c.createStatement()) {
      st.execute("ANALYZE " + s.name() + ".event_journal");
      st.execute("ANALYZE " + s.name() + ".event_tag");
    } catch (SQLException e) {
      throw new IllegalStateException("cannot analyze schema " + s.name() + ": " + e.getMessage(), e);
    }
  }

  String version() {
    try (Connection c = connect(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SHOW server_version")) {
      rs.next();
      String host = baseUrl.replaceFirst("^jdbc:postgresql://", "").replaceFirst("\\?.*$", "");
      return "PostgreSQL " + rs.getString(1).split(" ")[0] + " @ " + host;
    } catch (SQLException e) {
      return "PostgreSQL (unreachable: " + e.getMessage() + ")";
    }
  }

  static String withParam(String url, String param) {
    return url + (url.contains("?") ? "&" : "?") + param;
  }

  record Schema(String name, String url) {}

  /** The node's journal settings for a schema, with the schema created by the product's DDL. */
  JournalSettings journal(Schema s, int maxConnections) {
    JournalSettings j = JournalSettings.fromConfig(ConfigFactory.parseMap(Map.of(
        "persistence", "postgres",
        "db.url", s.url(),
        "db.user", user,
        "db.password", password,
        "db.max-connections", maxConnections)));
    JournalSchema.ensure(j);
    return j;
  }

  /** Node overrides for a journal in {@code s}. */
  Config nodeDb(Schema s) {
    Map<String, Object> m = new HashMap<>();
    m.put("agentscope.training.persistence", "postgres");
    m.put("agentscope.training.db.url", s.url());
    m.put("agentscope.training.db.user", user);
    m.put("agentscope.training.db.password", password);
    return ConfigFactory.parseMap(m);
  }

  long count(Schema s, String sql) {
    try (Connection c = DriverManager.getConnection(s.url(), user, password); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (SQLException e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
  }
}
