package io.otl.persistence;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * Which database holds the journal and how to reach it. Environment variables win over the
 * configuration so containers can be pointed at a database without a config file.
 */
public record JournalSettings(Kind kind, String url, String user, String password, int maxConnections) {

  public enum Kind { H2, POSTGRES }

  /**
   * The embedded default. WRITE_DELAY=0: H2 otherwise writes committed transactions to its file up
   * to a second later, and a kill -9 in that second loses events already acknowledged. No
   * AUTO_SERVER: it opens a TCP port on every interface for whoever holds the key in the data
   * folder; the command-line tools go through the node's HTTP API instead ({@link DataFolder}).
   */
  public static final String DEFAULT_H2_URL = "jdbc:h2:file:./data/journal;DATABASE_TO_UPPER=false;WRITE_DELAY=0";
  public static final String DEFAULT_PG_URL = "jdbc:postgresql://127.0.0.1:5432/postgres?reWriteBatchedInserts=true";

  /**
   * Reads {@code agentscope.training.persistence} and {@code .db}. The node's configuration stack
   * has already applied OTL_PERSISTENCE and OTL_DB_* (io.otl.node.config.NodeConfig).
   */
  public static JournalSettings fromConfig(Config training) {
    String kindName = training.getString("persistence");
    Kind kind = switch (kindName) {
      case "h2" -> Kind.H2;
      case "postgres", "postgresql" -> Kind.POSTGRES;
      default -> throw new IllegalArgumentException("agentscope.training.persistence = " + kindName
          + ": allowed values are h2, postgres");
    };
    Config db = training.getConfig("db");
    String url = firstNonEmpty(db.getString("url"), kind == Kind.H2 ? DEFAULT_H2_URL : DEFAULT_PG_URL);
    String user = firstNonEmpty(db.getString("user"), kind == Kind.H2 ? "sa" : "postgres");
    String password = db.getString("password");
    if (kind == Kind.H2 && !url.startsWith("jdbc:h2:")) {
      throw new IllegalArgumentException("agentscope.training.db.url (or OTL_DB_URL) = " + url
          + ": persistence = h2 needs a jdbc:h2: URL");
    }
    if (kind == Kind.POSTGRES && !url.startsWith("jdbc:postgresql:")) {
      throw new IllegalArgumentException("agentscope.training.db.url (or OTL_DB_URL) = " + url
          + ": persistence = postgres needs a jdbc:postgresql: URL");
    }
    if (kind == Kind.H2) url = closedByTheNode(withTheNodesH2Settings(url));
    if (kind == Kind.POSTGRES && !url.contains("reWriteBatchedInserts")) {
      url = url + (url.contains("?") ? "&" : "?") + "reWriteBatchedInserts=true";
    }
    return new JournalSettings(kind, url, user, password, db.getInt("max-connections"));
  }

  /**
   * A URL of the user's own ({@code jdbc:h2:file:./data-2/journal}, as the docs and the "data folder
   * in use" message suggest) gets what the default has: DATABASE_TO_UPPER=false, without which the
   * node's own queries ({@code event_journal}, unquoted) find no table and every coordinator and model
   * view failed (trial t151), and WRITE_DELAY=0, without which a kill -9 loses acknowledged events.
   * A URL that sets either keeps its value; DATABASE_TO_UPPER=TRUE is refused, naming the key.
   */
  static String withTheNodesH2Settings(String url) {
    String upper = url.toUpperCase(java.util.Locale.ROOT).replace(" ", "");
    if (upper.contains(";DATABASE_TO_UPPER=TRUE")) {
      throw new IllegalArgumentException("agentscope.training.db.url (or OTL_DB_URL) = " + withoutPassword(url)
          + ": the journal needs DATABASE_TO_UPPER=false (its table names are lower case); leave the option out");
    }
    String out = url;
    if (!upper.contains(";DATABASE_TO_UPPER=")) out += ";DATABASE_TO_UPPER=false";
    if (!upper.contains(";WRITE_DELAY=")) out += ";WRITE_DELAY=0";
    return out;
  }

  /**
   * H2 closes a database in a JVM shutdown hook of its own by default, which races the node's
   * coordinated shutdown: the journal's last writes and the connection pool then fail with
   * "Database is already closed". The node closes its pool last, so H2 must not. H2 refuses the
   * flag beside AUTO_SERVER=TRUE (its server owns closing), so such URLs are left as they are.
   */
  static String closedByTheNode(String url) {
    String upper = url.toUpperCase(java.util.Locale.ROOT);
    if (upper.contains("DB_CLOSE_ON_EXIT=") || upper.contains("AUTO_SERVER=TRUE")) return url;
    return url + ";DB_CLOSE_ON_EXIT=FALSE";
  }

  /** The pekko-persistence-jdbc settings for this database, to lay over the node's config. */
  public Config pekkoConfig() {
    Map<String, Object> m = new HashMap<>();
    String prefix = "pekko-persistence-jdbc.shared-databases.default.";
    m.put(prefix + "profile", kind == Kind.H2 ? "slick.jdbc.H2Profile$" : "slick.jdbc.PostgresProfile$");
    m.put(prefix + "db.url", url);
    m.put(prefix + "db.user", user);
    m.put(prefix + "db.password", password);
    m.put(prefix + "db.driver", driver());
    m.put(prefix + "db.numThreads", maxConnections);
    m.put(prefix + "db.maxConnections", maxConnections);
    m.put(prefix + "db.minConnections", Math.min(4, maxConnections));
    return ConfigFactory.parseMap(m, "journal settings (agentscope.training.db)");
  }

  /** The same database with another password (the embedded journal's generated one). */
  public JournalSettings withPassword(String newPassword) {
    return new JournalSettings(kind, url, user, newPassword, maxConnections);
  }

  public String driver() {
    return kind == Kind.H2 ? "org.h2.Driver" : "org.postgresql.Driver";
  }

  /** Where the H2 file lives, for messages; null for PostgreSQL. */
  public Path h2File() {
    if (kind != Kind.H2 || !url.startsWith("jdbc:h2:file:")) return null;
    String rest = url.substring("jdbc:h2:file:".length());
    int semi = rest.indexOf(';');
    return Path.of(semi < 0 ? rest : rest.substring(0, semi) + ".mv.db");
  }

  /**
   * The URL without a password: PostgreSQL's driver also takes {@code password=} as a URL parameter,
   * and the URL goes into logs and into messages sent to other nodes.
   */
  public String safeUrl() {
    return withoutPassword(url);
  }

  /**
   * {@code url} with the value of every parameter whose name says it is a secret ({@code password},
   * PostgreSQL's {@code sslpassword}, anything with "secret", "token", "pwd" …) and of a user-info
   * secret replaced by ***. Only {@code password=} was masked: an {@code sslpassword} went into the
   * start-up lines as written.
   */
  public static String withoutPassword(String url) {
    String masked = url.replaceAll(
        "(?i)([?&;][a-z0-9_.-]*(?:password|passwd|pwd|secret|token|apikey|api_key|credential)[a-z0-9_.-]*=)[^&;]*",
        "$1***");
    return masked.replaceAll("(//[^/:@?]*:)[^@/?]*@", "$1***@");
  }

  /** Never prints the password. */
  @Override
  public String toString() {
    return "JournalSettings[" + kind + " " + safeUrl() + " as " + user + (password.isEmpty() ? "" : " (password set)") + "]";
  }

  private static String firstNonEmpty(String... values) {
    for (String v : values) if (v != null && !v.isEmpty()) return v;
    return "";
  }
}
