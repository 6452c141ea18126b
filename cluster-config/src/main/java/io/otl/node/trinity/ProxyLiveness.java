package io.otl.node.trinity;

import io.otl.core.training.OnlineTrainingBackend;
import io.otl.http.ApiMetrics;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.typed.ActorSystem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Trinity proxy's liveness ({@code GET /health}, design §5.2) as the gauge {@code
 * otl_trinity_proxy_up} (1 up, 0 down), with one log line when it changes. Nothing read it before:
 * a proxy that was down showed only as a retry warning per failed forward, while the node's health
 * and metrics said nothing (trial t77). Readiness is left alone on purpose: the gateway and the
 * events API still work while the proxy is down (rewards wait in the coordinators' journals and are
 * retried), so the node must stay in its load balancer.
 */
public final class ProxyLiveness {
  public static final String GAUGE = "otl_trinity_proxy_up";
  private static final Logger log = LoggerFactory.getLogger(ProxyLiveness.class);

  private final OnlineTrainingBackend proxy;
  private final String endpoint;
  /** Null until the first check answered: a scrape before it shows no value rather than a guess. */
  private final AtomicReference<Boolean> up = new AtomicReference<>();
  /** One check at a time: a hung proxy answers only after trinity.request-timeout, longer than the interval. */
  private final AtomicBoolean checking = new AtomicBoolean();

  ProxyLiveness(OnlineTrainingBackend proxy, String endpoint) {
    this.proxy = proxy;
    this.endpoint = endpoint;
  }

  /** Registers the gauge and checks the proxy every {@code interval}, the first time at once. */
  public static ProxyLiveness start(ActorSystem<?> system, TrinityEndpoint endpoint, ApiMetrics metrics, Duration interval) {
    ProxyLiveness l = new ProxyLiveness(new TrinityProxyBackend(system, endpoint), endpoint.baseUri().toString());
    metrics.gauge(GAUGE, "1 when the Trinity proxy (training-runner.trinity-endpoint) answered GET /health with"
        + " a 2xx at the last check, 0 when it did not (unreachable, or an error status); backend trinity-proxy only",
        () -> {
          Boolean u = l.up.get();
          return u == null ? Map.of() : Map.of("", u ? 1.0 : 0.0);
        });
    system.scheduler().scheduleWithFixedDelay(Duration.ZERO, interval, l::check, system.executionContext());
    return l;
  }

  void check() {
    if (!checking.compareAndSet(false, true)) return;
    proxy.health().whenComplete((ok, error) -> {
      checking.set(false);
      boolean now = error == null && Boolean.TRUE.equals(ok);
      Boolean before = up.getAndSet(now);
      if (before == null ? !now : before != now) {
        if (now) {
          log.info("the Trinity proxy at {} answers GET /health again", endpoint);
        } else {
          log.warn("the Trinity proxy at {} does not answer GET /health: rewards to forward wait in the journal and"
              + " are retried, and no new model version is read until it is back", endpoint);
        }
      }
    });
  }
}
