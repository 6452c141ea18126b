package io.otl.http;

import io.otl.core.LogThrottle;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Requests the journal's database failed, answered 503: one WARN a minute at most, naming the SQLState and
 * the driver's exception class (never its message, which may name the database host or the statement).
 * An outage fails every request, so a line each would flood the log; a misconfiguration (a revoked grant,
 * a dropped table) must still be visible to the operator.
 */
final class DatabaseFailures {
  private static final Logger log = LoggerFactory.getLogger(ApiErrors.class);
  private static final LogThrottle throttle = new LogThrottle(Duration.ofMinutes(1));

  private DatabaseFailures() {}

  static void seen(java.sql.SQLException e) {
    long n = throttle.occurred();
    if (n > 0) {
      log.warn("journal database failed a request, answered 503: SQLState {} ({}); {} such requests since the last such "
          + "line", e.getSQLState(), e.getClass().getSimpleName(), n);
    }
  }
}
