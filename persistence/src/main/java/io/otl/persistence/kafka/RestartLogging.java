package io.otl.persistence.kafka;

import org.apache.pekko.NotUsed;
import org.apache.pekko.event.Logging;
import org.apache.pekko.stream.RestartSettings;
import org.apache.pekko.stream.javadsl.Source;
import org.slf4j.Logger;

/**
 * One log line per failed attempt of a Kafka stream that restarts with back-off. Pekko's restart logs
 * every failure at WARN with its stack trace; for a failure the node had just said in its own words (a
 * broker that did not answer, a missing topic) that repeated the sentence as a stack trace at each
 * back-off: 21 such pairs in two minutes of a broker outage (trial-kafka). Pekko's line now goes to DEBUG,
 * and a failure the node has not said is logged here once, with its stack trace.
 */
final class RestartLogging {
  private RestartLogging() {}

  /** A failure whose cause is already logged, in words a user acts on: the restart adds nothing. */
  static final class Said extends IllegalStateException {
    Said(String message) {
      super(message);
    }
  }

  /** {@code settings} with pekko's own restart lines at DEBUG: {@link #told} says each failure. */
  static RestartSettings quiet(RestartSettings settings) {
    return settings.withLogSettings(RestartSettings.createLogSettings(Logging.DebugLevel()));
  }

  /** {@code attempt}, whose failure is logged once at WARN ({@code what} names the stream) unless already said. */
  static <T> Source<T, NotUsed> told(Source<T, NotUsed> attempt, Logger log, String what) {
    return attempt.watchTermination((mat, done) -> {
      done.whenComplete((ok, failure) -> {
        if (failure != null && !said(failure)) {
          log.warn("{} failed; it restarts with back-off (agentscope.training.kafka.restart.*)", what, failure);
        }
      });
      return mat;
    });
  }

  /** Whether {@code failure} or a cause of it (a future's CompletionException) is {@link Said}. */
  private static boolean said(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof Said) return true;
    }
    return false;
  }
}
