package io.otl.node;

import com.typesafe.config.Config;
import java.util.List;
import java.util.Locale;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.management.cluster.bootstrap.ClusterBootstrap;
import org.apache.pekko.management.javadsl.PekkoManagement;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a node becomes a cluster member, chosen by {@code agentscope.training.cluster.bootstrap}:
 *
 * <ul>
 *   <li>{@code seed-nodes} (the default): Pekko joins the {@code pekko.cluster.seed-nodes} by itself
 *       (env {@code OTL_SEED_NODES}); with none the node joins itself and forms a cluster of one,
 *       the embedded default.
 *   <li>{@code management}: pekko-management cluster bootstrap. The node serves the management HTTP
 *       endpoint ({@code pekko.management.http.*}), finds its peers through Pekko Discovery (e.g.
 *       {@code contact-point-discovery.discovery-method = config} with
 *       {@code pekko.discovery.config.services.<name>.endpoints}), and joins an existing cluster or,
 *       when all {@code required-contact-point-nr} peers agree there is none, forms one. Seed nodes
 *       must then be empty.
 * </ul>
 *
 * <p>With {@code agentscope.training.cluster.management.enabled = true} the management endpoint
 * (read-only {@code GET /cluster/members}, {@code /ready}, {@code /alive}) also runs in
 * {@code seed-nodes} mode, for operators and tests.
 */
public final class ClusterMembership {
  private static final Logger log = LoggerFactory.getLogger(ClusterMembership.class);

  /** The setting that selects the mode. */
  public static final String BOOTSTRAP_KEY = ClusterSettings.BOOTSTRAP_KEY;

  /** The membership modes. */
  public enum Mode {
    SEED_NODES,
    MANAGEMENT;

    static Mode parse(String value) {
      return switch (value.trim().toLowerCase(Locale.ROOT)) {
        case "seed-nodes" -> SEED_NODES;
        case "management" -> MANAGEMENT;
        default -> throw new IllegalArgumentException(BOOTSTRAP_KEY + " = \"" + value
            + "\" is not allowed: use seed-nodes (static pekko.cluster.seed-nodes / OTL_SEED_NODES) or "
            + "management (pekko-management cluster bootstrap with Pekko Discovery)");
      };
    }
  }

  private ClusterMembership() {}

  /** The mode {@code config} asks for; {@code seed-nodes} when the key is absent. */
  public static Mode mode(Config config) {
    return ClusterSettings.mode(config);
  }

  /**
   * Starts joining: returns at once, membership proceeds in the background (readiness reports the
   * member status). {@code config} is the node's effective configuration, normally
   * {@code system.settings().config()}, and {@code settings} its cluster settings, read once at start-up.
   *
   * @throws IllegalArgumentException when the settings contradict each other, naming the keys
   */
  public static void join(ActorSystem<?> system, Config config, ClusterSettings settings) {
    Mode mode = settings.bootstrap();
    List<String> seeds = config.getStringList("pekko.cluster.seed-nodes");
    boolean managementHttp = mode == Mode.MANAGEMENT || settings.managementEnabled();
    if (mode == Mode.MANAGEMENT) {
      if (!seeds.isEmpty()) {
        throw new IllegalArgumentException(BOOTSTRAP_KEY + " = management needs pekko.cluster.seed-nodes = [] "
            + "and OTL_SEED_NODES unset (found " + seeds.size() + " seed node(s)); "
            + "cluster bootstrap finds its peers through Pekko Discovery instead");
      }
      String method = config.getString("pekko.management.cluster.bootstrap.contact-point-discovery.discovery-method");
      if ("pekko.discovery".equals(method)) method = config.getString("pekko.discovery.method");
      if (method.startsWith("<")) {
        throw new IllegalArgumentException(BOOTSTRAP_KEY + " = management needs a discovery method: set "
            + "pekko.management.cluster.bootstrap.contact-point-discovery.discovery-method (e.g. config, "
            + "with pekko.discovery.config.services.<service-name>.endpoints)");
      }
    }
    if (managementHttp) startManagement(system);
    switch (mode) {
      case MANAGEMENT -> {
        ClusterBootstrap.get(system.classicSystem()).start();
        log.info("cluster membership: pekko-management cluster bootstrap ({})",
            config.getString("pekko.management.cluster.bootstrap.contact-point-discovery.discovery-method"));
      }
      case SEED_NODES -> {
        Cluster cluster = Cluster.get(system);
        if (seeds.isEmpty()) {
          cluster.manager().tell(Join.create(cluster.selfMember().address()));
          log.info("cluster membership: no seed nodes, forming a cluster of one at {}", cluster.selfMember().address());
        } else {
          // Pekko joins the configured seed nodes by itself.
          log.info("cluster membership: seed nodes {}", seeds);
        }
      }
    }
  }

  private static void startManagement(ActorSystem<?> system) {
    PekkoManagement management = PekkoManagement.get(system.classicSystem());
    Object uri = management.start().toCompletableFuture().join();
    CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseServiceUnbind(), "stop-pekko-management",
        () -> management.stop().thenApply(d -> Done.getInstance()));
    log.info("pekko-management HTTP at {}", uri);
  }
}
