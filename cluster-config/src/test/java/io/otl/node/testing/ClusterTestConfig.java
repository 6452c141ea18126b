package io.otl.node.testing;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

/**
 * The config of a cluster member an in-JVM test starts: several ActorSystems in one JVM need their
 * JMX beans told apart, must not exit the JVM on shutdown and log only warnings through SLF4J. One
 * place, so the cluster tests do not drift apart on what "a test member" is.
 */
public final class ClusterTestConfig {

  private ClusterTestConfig() {}

  /**
   * A member on 127.0.0.1:{@code port} (0: any free port) downed by {@code downingProviderClass},
   * over Pekko's reference config; unresolved, so callers can lay their settings over it.
   */
  public static Config member(int port, String downingProviderClass) {
    return ConfigFactory.parseString("""
        pekko.actor.provider = cluster
        pekko.remote.artery.canonical { hostname = "127.0.0.1", port = %d }
        pekko.cluster.jmx.multi-mbeans-in-same-jvm = on
        pekko.cluster.downing-provider-class = "%s"
        pekko.coordinated-shutdown.exit-jvm = off
        pekko.loglevel = WARNING
        pekko.loggers = ["org.apache.pekko.event.slf4j.Slf4jLogger"]
        pekko.logging-filter = "org.apache.pekko.event.slf4j.Slf4jLoggingFilter"
        """.formatted(port, downingProviderClass)).withFallback(ConfigFactory.defaultReference());
  }
}
