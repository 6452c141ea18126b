package io.otl.node.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.http.gateway.GatewaySettings;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps pekko-http's {@code idle-timeout} above the gateway's longest wait. Nothing moves on a
 * connection while a model writes a whole answer, and pekko-http closes a connection idle that long
 * even with a request in progress: its 60 s default cut answers the gateway would still have waited
 * for ({@link GatewaySettings#answerTimeout}: gateway.timeout, or the model section's timeout_seconds
 * times its attempts, twice with fallback-to-stable).
 */
public final class SlowAnswers {
  private static final Logger log = LoggerFactory.getLogger(SlowAnswers.class);
  static final String IDLE_TIMEOUT = "pekko.http.server.idle-timeout";
  /** Beyond the answer: its bytes and the recording's start. */
  private static final Duration MARGIN = Duration.ofSeconds(20);

  private SlowAnswers() {}

  static final String REQUESTS_DONE_TIMEOUT = "pekko.coordinated-shutdown.phases.service-requests-done.timeout";
  /** Beyond the shutdown deadline: the connections' close and the phase's own bookkeeping. */
  private static final Duration PHASE_MARGIN = Duration.ofSeconds(5);

  /**
   * {@code config} with the shutdown phase that drains the HTTP answers ({@code service-requests-done},
   * pekko's 5 s) lasting at least {@code http.shutdown-deadline} plus a margin: pekko moves on when a
   * phase's time is up and stops the node under answers the deadline still promised them.
   */
  public static Config requestsDoneAboveDeadline(Config config, Duration shutdownDeadline) {
    Duration needed = shutdownDeadline.plus(PHASE_MARGIN);
    // A phase without its own timeout has pekko's default one.
    Duration now = config.getDuration(config.hasPath(REQUESTS_DONE_TIMEOUT) ? REQUESTS_DONE_TIMEOUT
        : "pekko.coordinated-shutdown.default-phase-timeout");
    if (now.compareTo(needed) >= 0) return config;
    return ConfigFactory.parseMap(Map.of(REQUESTS_DONE_TIMEOUT, needed.toMillis() + "ms")).withFallback(config);
  }

  /** {@code config} with the idle timeout raised where it would cut the gateway's answers. */
  public static Config idleTimeoutAboveAnswers(Config config, Optional<GatewaySettings> gateway) {
    if (gateway.isEmpty() || !gateway.get().enabled() || config.getString(IDLE_TIMEOUT).equals("infinite")) {
      return config;
    }
    Duration idle = config.getDuration(IDLE_TIMEOUT);
    Duration needed = gateway.get().answerTimeout().plus(MARGIN);
    if (idle.compareTo(needed) >= 0) return config;
    log.info("{} raised from {} s to {} s: above the gateway's longest wait ({} s: gateway.timeout {} s{}{})",
        IDLE_TIMEOUT, idle.toSeconds(), needed.toSeconds(), gateway.get().answerTimeout().toSeconds(),
        gateway.get().timeout().toSeconds(),
        gateway.get().endpointCalls().isEmpty() ? "" : ", the model section's timeout and retries",
        gateway.get().fallbackToStable() ? ", twice with fallback-to-stable" : "");
    return ConfigFactory.parseMap(Map.of(IDLE_TIMEOUT, needed.toMillis() + "ms")).withFallback(config);
  }
}
