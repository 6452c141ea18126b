package io.otl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import java.sql.SQLException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/**
 * The JDBC failure a 503 and readiness name: the first in the chain that has an SQLState. A wrapper without
 * one around the driver's own failure named no state (review t122: readiness said the wrapper's class name
 * where it had said {@code SQLState 08001}).
 */
class DatabaseCauseTest {
  @Test
  void theFirstFailureWithAStateIsNamedThroughWrappersWithout() {
    SQLException driver = new SQLException("connection refused", "08001");
    SQLException wrapper = new SQLException("pool failed", (String) null, driver);
    assertSame(driver, ApiErrors.databaseCause(new CompletionException(wrapper)));
    assertEquals("08001", ApiErrors.databaseCause(new RuntimeException(wrapper)).getSQLState());
  }

  @Test
  void aFailureWithoutAnyStateIsStillADatabaseOne() {
    SQLException outer = new SQLException("outer", (String) null, new SQLException("inner, no state either"));
    assertSame(outer, ApiErrors.databaseCause(new RuntimeException(outer)), "the first, when none has a state");
    assertNull(ApiErrors.databaseCause(new IllegalStateException("not a database failure")));
  }
}
