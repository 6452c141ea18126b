package io.otl.http;

import java.util.concurrent.atomic.AtomicLong;
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
  private static final long QUIET_NANOS = 60_000_000_000L;
  private static final AtomicLong count = new AtomicLong();
  private static final AtomicLong lastLogged = new AtomicLong(System.nanoTime() - QUIET_NANOS);

  private DatabaseFailures() {}

  static void seen(java.sql.SQLException e) {
    long n = count.incrementAndGet();
    long now = System.nanoTime();
    long last = lastLogged.get();
    if (now - last >= QUIET_NANOS && lastLogged.compareAndSet(last, now)) {
      log.warn("journal database failed a request, answered 503: SQLState {} ({}); {} such requests since start",
          e.getSQLState(), e.getClass().getSimpleName(), n);
    }
  }
}
