package io.otl.persistence;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The embedded journal's generated password: {@code <folder>/<name>.password} (0600), created on
 * the first start and reused. A journal created with the empty password (every journal before
 * issue #14) gets the generated one with ALTER USER, once; the password file is written first, so a
 * crash in between is finished on the next start.
 */
final class H2Password {
  private static final Logger log = LoggerFactory.getLogger(H2Password.class);

  private H2Password() {}

  static JournalSettings ensure(JournalSettings s, Path dir, String name) {
    Path file = dir.resolve(name + ".password");
    boolean exists = Files.exists(dir.resolve(name + ".mv.db"));
    String password;
    try {
      if (Files.exists(file)) {
        password = Files.readString(file, StandardCharsets.UTF_8).strip();
        DataFolder.restrict(file);
      } else {
        password = DataFolder.randomSecret();
        DataFolder.writePrivate(file, password + "\n");
      }
    } catch (IOException e) {
      throw new IllegalStateException("the database password file " + file + " cannot be read or written: "
          + DataFolder.describe(e), e);
    }
    if (password.isEmpty()) {
      throw new IllegalStateException("the database password file " + file + " is empty; remove it only together "
          + "with a journal that never had a password");
    }
    JournalSettings withPassword = s.withPassword(password);
    if (!exists) return withPassword; // H2 creates the database with this user and password
    try {
      JournalSchema.connect(withPassword).close();
      return withPassword;
    } catch (JournalSchema.JournalUnavailableException e) {
      if (!wrongPassword(e)) throw e;
    } catch (SQLException e) {
      throw new IllegalStateException("cannot open the journal in " + dir + ": " + e.getMessage(), e);
    }
    migrate(s, withPassword, dir);
    return withPassword;
  }

  /** The journal still has the empty password: set the generated one. */
  private static void migrate(JournalSettings empty, JournalSettings withPassword, Path dir) {
    try (Connection c = JournalSchema.connect(empty); Statement st = c.createStatement()) {
      String user;
      try (ResultSet rs = st.executeQuery("SELECT CURRENT_USER")) {
        rs.next();
        user = rs.getString(1);
      }
      // The password is URL-safe base64: nothing in it needs escaping inside quotes.
      st.execute("ALTER USER \"" + user.replace("\"", "\"\"") + "\" SET PASSWORD '" + withPassword.password() + "'");
      log.info("the journal in {} had the empty password; it now has the generated one ({}.password)", dir,
          DataFolder.base(empty).map(p -> p.getFileName().toString()).orElse("journal"));
    } catch (JournalSchema.JournalUnavailableException e) {
      if (wrongPassword(e)) {
        throw new IllegalStateException("the journal in " + dir + " refuses both the generated password (in its "
            + ".password file) and the empty one; set agentscope.training.db.password (or OTL_DB_PASSWORD) to its password", e);
      }
      throw e;
    } catch (SQLException e) {
      throw new IllegalStateException("setting the journal's password in " + dir + " failed: " + e.getMessage(), e);
    }
  }

  private static boolean wrongPassword(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SQLException sql && "28000".equals(sql.getSQLState())) return true;
    }
    return false;
  }
}
