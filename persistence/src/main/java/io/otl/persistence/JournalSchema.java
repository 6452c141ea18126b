package io.otl.persistence;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Properties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the journal, tag, snapshot and durable-state tables if they are missing. Our own DDL,
 * {@code IF NOT EXISTS} throughout, so every start may run it; errors fail start-up loudly
 * (unlike pekko-persistence-jdbc's SchemaUtils, which logs them at DEBUG).
 */
public final class JournalSchema {
  private static final Logger log = LoggerFactory.getLogger(JournalSchema.class);

  private JournalSchema() {}

  static final List<String> POSTGRES = List.of(
      """
      CREATE TABLE IF NOT EXISTS event_journal(
        ordering BIGSERIAL,
        persistence_id VARCHAR(255) NOT NULL,
        sequence_number BIGINT NOT NULL,
        deleted BOOLEAN DEFAULT FALSE NOT NULL,
        writer VARCHAR(255) NOT NULL,
        write_timestamp BIGINT,
        adapter_manifest VARCHAR(255),
        event_ser_id INTEGER NOT NULL,
        event_ser_manifest VARCHAR(255) NOT NULL,
        event_payload BYTEA NOT NULL,
        meta_ser_id INTEGER,
        meta_ser_manifest VARCHAR(255),
        meta_payload BYTEA,
        PRIMARY KEY(persistence_id, sequence_number))""",
      "CREATE UNIQUE INDEX IF NOT EXISTS event_journal_ordering_idx ON event_journal(ordering)",
      """
      CREATE TABLE IF NOT EXISTS event_tag(
        event_id BIGINT,
        tag VARCHAR(256),
        PRIMARY KEY(event_id, tag),
        CONSTRAINT fk_event_journal FOREIGN KEY(event_id) REFERENCES event_journal(ordering) ON DELETE CASCADE)""",
      "CREATE INDEX IF NOT EXISTS event_tag_tag_idx ON event_tag(tag, event_id)",
      """
      CREATE TABLE IF NOT EXISTS snapshot(
        persistence_id VARCHAR(255) NOT NULL,
        sequence_number BIGINT NOT NULL,
        created BIGINT NOT NULL,
        snapshot_ser_id INTEGER NOT NULL,
        snapshot_ser_manifest VARCHAR(255) NOT NULL,
        snapshot_payload BYTEA NOT NULL,
        meta_ser_id INTEGER,
        meta_ser_manifest VARCHAR(255),
        meta_payload BYTEA,
        PRIMARY KEY(persistence_id, sequence_number))""",
      """
      CREATE TABLE IF NOT EXISTS durable_state(
        global_offset BIGSERIAL,
        persistence_id VARCHAR(255) NOT NULL,
        revision BIGINT NOT NULL,
        state_payload BYTEA NOT NULL,
        state_serial_id INTEGER NOT NULL,
        state_serial_manifest VARCHAR(255),
        tag VARCHAR,
        state_timestamp BIGINT NOT NULL,
        PRIMARY KEY(persistence_id))""",
      "CREATE INDEX IF NOT EXISTS state_tag_idx ON durable_state(tag)",
      "CREATE INDEX IF NOT EXISTS state_global_offset_idx ON durable_state(global_offset)");

  /**
   * H2 payloads are VARBINARY, not BLOB: embedded H2 keeps every BLOB a query returned reachable
   * for LOB_TIMEOUT (5 minutes), which exhausts the heap on replays of large journals.
   */
  static final List<String> H2 = List.of(
      """
      CREATE TABLE IF NOT EXISTS "event_journal"(
        "ordering" BIGINT UNIQUE NOT NULL AUTO_INCREMENT,
        "deleted" BOOLEAN DEFAULT false NOT NULL,
        "persistence_id" VARCHAR(255) NOT NULL,
        "sequence_number" BIGINT NOT NULL,
        "writer" VARCHAR NOT NULL,
        "write_timestamp" BIGINT NOT NULL,
        "adapter_manifest" VARCHAR NOT NULL,
        "event_payload" VARBINARY NOT NULL,
        "event_ser_id" INTEGER NOT NULL,
        "event_ser_manifest" VARCHAR NOT NULL,
        "meta_payload" VARBINARY,
        "meta_ser_id" INTEGER,
        "meta_ser_manifest" VARCHAR,
        PRIMARY KEY("persistence_id","sequence_number"))""",
      "CREATE UNIQUE INDEX IF NOT EXISTS \"event_journal_ordering_idx\" ON \"event_journal\"(\"ordering\")",
      """
      CREATE TABLE IF NOT EXISTS "event_tag"(
        "event_id" BIGINT NOT NULL,
        "tag" VARCHAR NOT NULL,
        PRIMARY KEY("event_id", "tag"),
        CONSTRAINT "fk_event_journal" FOREIGN KEY("event_id") REFERENCES "event_journal"("ordering")
          ON DELETE CASCADE)""",
      "CREATE INDEX IF NOT EXISTS \"event_tag_tag_idx\" ON \"event_tag\"(\"tag\", \"event_id\")",
      """
      CREATE TABLE IF NOT EXISTS "snapshot"(
        "persistence_id" VARCHAR(255) NOT NULL,
        "sequence_number" BIGINT NOT NULL,
        "created" BIGINT NOT NULL,
        "snapshot_ser_id" INTEGER NOT NULL,
        "snapshot_ser_manifest" VARCHAR NOT NULL,
        "snapshot_payload" VARBINARY NOT NULL,
        "meta_ser_id" INTEGER,
        "meta_ser_manifest" VARCHAR,
        "meta_payload" VARBINARY,
        PRIMARY KEY("persistence_id","sequence_number"))""",
      "CREATE SEQUENCE IF NOT EXISTS \"global_offset_seq\"",
      """
      CREATE TABLE IF NOT EXISTS "durable_state"(
        "global_offset" BIGINT DEFAULT NEXT VALUE FOR "global_offset_seq",
        "persistence_id" VARCHAR(255) NOT NULL,
        "revision" BIGINT NOT NULL,
        "state_payload" VARBINARY NOT NULL,
        "state_serial_id" INTEGER NOT NULL,
        "state_serial_manifest" VARCHAR,
        "tag" VARCHAR,
        "state_timestamp" BIGINT NOT NULL,
        PRIMARY KEY("persistence_id"))""",
      "CREATE INDEX IF NOT EXISTS \"state_tag_idx\" ON \"durable_state\"(\"tag\")",
      "CREATE INDEX IF NOT EXISTS \"state_global_offset_idx\" ON \"durable_state\"(\"global_offset\")");

  /**
   * Connects with the given settings and creates whatever is missing, including the journal's
   * identity ({@link JournalIdentity}). Several nodes may start at once against PostgreSQL: an
   * advisory lock serializes them, so they all read the same identity.
   *
   * @return the identity of the journal in this database

   * @throws JournalUnavailableException naming the settings to fix when the database cannot be reached
   * @throws IllegalStateException when a table of another layout or another schema version is found
   *     ({@link JournalLayout}), naming it and the fix
   */
  public static JournalIdentity ensure(JournalSettings settings) {
    try (Connection c = connect(settings)) {
      c.setAutoCommit(false);
      JournalIdentity identity;
      try (Statement st = c.createStatement()) {
        if (settings.kind() == JournalSettings.Kind.POSTGRES) st.execute("SELECT pg_advisory_xact_lock(7424001)");
        for (String ddl : settings.kind() == JournalSettings.Kind.H2 ? H2 : POSTGRES) st.execute(ddl);
        for (String ddl : JournalIdentity.ddl(settings.kind())) st.execute(ddl);
        for (String ddl : ClusterLease.ddl(settings.kind())) st.execute(ddl);
        JournalLayout.check(c, settings);
        identity = JournalIdentity.readOrCreate(c, settings.kind());
        JournalLayout.checkVersion(identity, settings);
        c.commit();
      } catch (IllegalStateException refused) {
        c.rollback(); // on PostgreSQL the DDL of this start goes too: a refused start creates nothing
        throw refused;
      } catch (SQLException e) {
        c.rollback();
        String missingSchema = missingSchema(settings, e);
        String denied = missingSchema.isEmpty() ? permissionDenied(settings, e) : "";
        throw new IllegalStateException("creating the journal schema in " + settings.safeUrl() + " failed: "
            + (!missingSchema.isEmpty() ? missingSchema : !denied.isEmpty() ? denied : e.getMessage()), e);
      }
      log.info("journal schema ready ({} at {}, cluster id {}, schema version {})", settings.kind(),
          settings.safeUrl(), identity.clusterId(), identity.schemaVersion());
      return identity;
    } catch (SQLException e) {
      throw new IllegalStateException("creating the journal schema failed: " + e.getMessage(), e);
    }
  }

  /**
   * PostgreSQL says "no schema has been selected to create in" (SQLSTATE 3F000) when the URL's
   * {@code currentSchema} names a schema that does not exist: the node creates tables, not the schema.
   * Said in the node's words alone: PostgreSQL's named no setting, and its "Position: 28" (in the node's
   * own DDL) went on a line of its own before the hint (trial t61). Empty for any other failure.
   */
  static String missingSchema(JournalSettings settings, SQLException e) {
    if (settings.kind() != JournalSettings.Kind.POSTGRES || !"3F000".equals(e.getSQLState())) return "";
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("[?&]currentSchema=([^&]*)").matcher(settings.url());
    String schema = m.find() ? m.group(1) : null;
    return schema == null || schema.isEmpty()
        ? "no schema of the database's search_path exists to create the tables in: name one with currentSchema= in"
            + " agentscope.training.db.url or OTL_DB_URL"
        : "the schema " + schema + " named by currentSchema= in agentscope.training.db.url or OTL_DB_URL does not"
            + " exist: create it first, e.g. CREATE SCHEMA " + schema + ", or name an existing one";
  }

  /**
   * PostgreSQL refuses the DDL with SQLSTATE 42501 to a user without CREATE on the schema ("permission
   * denied for schema public", also for a table that exists: IF NOT EXISTS is checked after the privilege)
   * or who does not own a table whose index it names ("must be owner of table event_tag"). It said so on two
   * lines with "Position: 28" and no word of what the node needs (operator trial t82). Empty for any other
   * failure.
   */
  static String permissionDenied(JournalSettings settings, SQLException e) {
    if (settings.kind() != JournalSettings.Kind.POSTGRES || !"42501".equals(e.getSQLState())) return "";
    String said = String.valueOf(e.getMessage()).lines().findFirst().orElse("").replaceFirst("^ERROR:\\s*", "");
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("[?&]currentSchema=([^&]*)").matcher(settings.url());
    String schema = m.find() && !m.group(1).isEmpty() ? m.group(1) : "public";
    String user = settings.user();
    return "the database user '" + user + "' may not create or index the journal's tables (" + said + "): the node"
        + " runs CREATE TABLE / CREATE INDEX IF NOT EXISTS at every start, so its user needs CREATE on the schema and"
        + " must own the tables. As the database's owner: GRANT CREATE ON SCHEMA " + schema + " TO " + user
        + ", and ALTER TABLE <table> OWNER TO " + user + " for each journal table another user made; or give it a"
        + " schema of its own (CREATE SCHEMA otl AUTHORIZATION " + user + ", then currentSchema=otl in"
        + " agentscope.training.db.url or OTL_DB_URL)";
  }

  /**
   * A plain JDBC connection, used for schema creation, health checks and the offline tools.
   * Connection errors name the settings a user must fix; the password never appears.
   */
  public static Connection connect(JournalSettings settings) {
    Properties p = new Properties();
    p.setProperty("user", settings.user());
    p.setProperty("password", settings.password());
    if (settings.kind() == JournalSettings.Kind.POSTGRES) {
      p.setProperty("connectTimeout", "5");
      p.setProperty("loginTimeout", "5");
    }
    try {
      Class.forName(settings.driver());
      return DriverManager.getConnection(settings.url(), p);
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException("JDBC driver " + settings.driver() + " is not on the classpath", e);
    } catch (SQLException e) {
      String hint = "28P01".equals(e.getSQLState()) || "28000".equals(e.getSQLState())
          ? "check agentscope.training.db.user / db.password (or OTL_DB_USER / OTL_DB_PASSWORD)"
          : "check agentscope.training.db.url (or OTL_DB_URL)";
      throw new JournalUnavailableException("cannot connect to the journal database " + settings.safeUrl() + " as user '"
          + settings.user() + "': " + unresolvedHost(settings, e).orElse(e.getMessage()) + " — " + hint, e);
    }
  }

  /**
   * The PostgreSQL driver says only "The connection attempt failed." when the URL's host does not resolve,
   * and reads a {@code user:password@} part as part of the host (trial t175); the cause says which. The
   * host is named only when the URL has no such part, whose password would be in it.
   */
  static java.util.Optional<String> unresolvedHost(JournalSettings settings, SQLException e) {
    boolean unresolved = false;
    for (Throwable t = e; t != null && !unresolved; t = t.getCause() == t ? null : t.getCause()) {
      unresolved = t instanceof java.net.UnknownHostException;
    }
    if (!unresolved || settings.kind() != JournalSettings.Kind.POSTGRES) return java.util.Optional.empty();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("^jdbc:postgresql://([^/?]*)").matcher(settings.url());
    String authority = m.find() ? m.group(1) : "";
    if (authority.contains("@")) {
      return java.util.Optional.of("the URL has a user:password@ part, which the PostgreSQL driver does not take (it"
          + " reads it as part of the host name, which then does not resolve): give the URL as"
          + " jdbc:postgresql://host:port/database and the user and password in agentscope.training.db.user /"
          + " db.password (or OTL_DB_USER / OTL_DB_PASSWORD)");
    }
    String host = authority.replaceFirst(":\\d*$", "");
    return java.util.Optional.of("the host " + (host.isEmpty() ? "of the URL" : host) + " does not resolve (a typo,"
        + " or a name this machine cannot look up)");
  }

  /** What a reader that found no journal should do instead; nothing was created. */
  private static final String NO_JOURNAL_HINT = ": no node has run on it. Run the command in the folder the node "
      + "runs in (it writes ./data), or name the node's journal with --config or OTL_PERSISTENCE and OTL_DB_URL; "
      + "nothing was created";
  /** The same for a database server, where the folder the command runs in plays no part. */
  private static final String NO_SERVER_JOURNAL_HINT = ": no node has run on it. Name the database (and schema, if "
      + "the node's URL gives one) the node writes to, with --config or OTL_DB_URL; nothing was created";

  /**
   * For the tools that only read (audit, export), before anything opens an embedded journal: H2
   * creates a missing file on connecting, so a command run in the wrong folder left an empty
   * database and a password file behind and then failed on SQL ("Table "event_journal" not found").
   */
  public static void requireJournalFile(JournalSettings settings) {
    java.util.Optional<java.nio.file.Path> base = DataFolder.base(settings);
    if (base.isEmpty()) return;
    java.nio.file.Path file = base.get().resolveSibling(base.get().getFileName() + ".mv.db");
    if (!java.nio.file.Files.exists(file)) throw new NoJournalException("there is no journal at " + file + NO_JOURNAL_HINT);
  }

  /**
   * A query that reads no row but needs the journal table as the node writes it: it fails when the table
   * is missing from the node's schema or not readable by its user (and waits behind an {@code ACCESS
   * EXCLUSIVE} lock, a migration's). Readiness runs it, since a server that answers {@code SELECT 1} may
   * hold no journal at all. It cannot see a write refused while reads pass (INSERT revoked, a read-only
   * replica): those writes are 503s, readiness stays up.
   */
  public static String journalTableProbe(JournalSettings settings) {
    return settings.kind() == JournalSettings.Kind.H2
        ? "SELECT 1 FROM \"event_journal\" WHERE 1 = 0" : "SELECT 1 FROM event_journal WHERE 1 = 0";
  }

  /** For the tools that only read: the database must hold the journal's table (a node created it). */
  public static void requireJournalTables(JournalSettings settings) {
    String probe = journalTableProbe(settings);
    try (Connection c = connect(settings); Statement st = c.createStatement()) {
      st.executeQuery(probe).close();
    } catch (SQLException e) {
      // SQL state class 42: the table is not there (PostgreSQL 42P01, H2 42102 / 42104)
      if (e.getSQLState() != null && e.getSQLState().startsWith("42")) {
        throw new NoJournalException("there is no journal in " + settings.safeUrl() + " (no table event_journal)"
            + (settings.kind() == JournalSettings.Kind.H2 ? NO_JOURNAL_HINT : NO_SERVER_JOURNAL_HINT));
      }
      throw new IllegalStateException("reading the journal in " + settings.safeUrl() + " failed: " + e.getMessage(), e);
    }
  }

  /** The settings name a place where no node has written a journal. */
  public static final class NoJournalException extends IllegalStateException {
    public NoJournalException(String message) {
      super(message);
    }
  }

  /** The journal database cannot be reached or refuses our credentials. */
  public static final class JournalUnavailableException extends RuntimeException {
    public JournalUnavailableException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
