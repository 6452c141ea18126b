package io.otl.persistence;

import com.typesafe.config.Config;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

/**
 * A small read-only pool beside the journal's own, for reads that must neither wait behind the
 * journal's writes and recoveries nor delay them.
 */
final class ReadOnlyPool {
  private ReadOnlyPool() {}

  /** To the database of {@code journal}. */
  static HikariDataSource of(String name, JournalSettings journal, int size, int minIdle) {
    return of(name, journal.url(), journal.user(), journal.password(), journal.driver(), size, minIdle);
  }

  /** To the database of a Slick {@code db} block (the read journal's): user, password and driver optional. */
  static HikariDataSource of(String name, Config slickDb, int size, int minIdle) {
    return of(name, slickDb.getString("url"), optional(slickDb, "user"), optional(slickDb, "password"),
        optional(slickDb, "driver"), size, minIdle);
  }

  private static HikariDataSource of(String name, String url, String user, String password, String driver, int size,
      int minIdle) {
    HikariConfig c = new HikariConfig();
    c.setPoolName(name);
    c.setJdbcUrl(url);
    if (user != null) c.setUsername(user);
    if (password != null) c.setPassword(password);
    if (driver != null) c.setDriverClassName(driver);
    c.setMaximumPoolSize(size);
    c.setMinimumIdle(minIdle);
    c.setReadOnly(true);
    // A database that is away fails a read within this rather than holding its caller.
    c.setConnectionTimeout(5_000);
    // Connects lazily: a database away at start-up fails the first read, never the node's start.
    c.setInitializationFailTimeout(-1);
    return new HikariDataSource(c);
  }

  private static String optional(Config c, String path) {
    return c.hasPath(path) ? c.getString(path) : null;
  }
}
