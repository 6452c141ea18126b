package io.otl.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.time.Duration;

/**
 * How this node joins its cluster ({@code agentscope.training.cluster}): the membership mode and the
 * seed lease. Pekko's own cluster keys ({@code pekko.cluster.seed-nodes}, the canonical address,
 * discovery) stay Pekko's; {@link ClusterMembership} and {@link SeedLease} only check them against
 * these. Defaults and a comment per key in the node's reference.conf.
 *
 * @param managementEnabled serve pekko-management's HTTP endpoint in seed-nodes mode too
 * @param leaseHeartbeat how often an Up member writes its heartbeat row
 * @param leaseWindow how young another member's heartbeat must be for a restarting first seed node
 *     to join it instead of forming a cluster
 * @param newMemberGrace how long a member must have been Up before shards are placed on it while
 *     settled members can take them ({@link SettledMembersFirst}; zero: Pekko's own placement)
 */
public record ClusterSettings(
    ClusterMembership.Mode bootstrap, boolean managementEnabled, Duration leaseHeartbeat, Duration leaseWindow,
    Duration newMemberGrace) {

  static final String PATH = "agentscope.training.cluster";
  static final String BOOTSTRAP_KEY = PATH + ".bootstrap";
  static final String MANAGEMENT_ENABLED_KEY = PATH + ".management.enabled";
  static final String WINDOW_KEY = PATH + ".lease-window";
  static final String HEARTBEAT_KEY = PATH + ".lease-heartbeat";
  static final String GRACE_KEY = PATH + ".new-member-grace";

  /** Reads a root configuration; keys it lacks take their reference.conf defaults. */
  public static ClusterSettings fromConfig(Config root) {
    Config c = root.withFallback(ConfigFactory.defaultReference());
    return new ClusterSettings(mode(root), c.hasPath(MANAGEMENT_ENABLED_KEY) && c.getBoolean(MANAGEMENT_ENABLED_KEY),
        c.getDuration(HEARTBEAT_KEY), c.getDuration(WINDOW_KEY), c.getDuration(GRACE_KEY));
  }

  /** The mode {@code root} asks for; {@code seed-nodes} when the key is absent. */
  static ClusterMembership.Mode mode(Config root) {
    return root.hasPath(BOOTSTRAP_KEY)
        ? ClusterMembership.Mode.parse(root.getString(BOOTSTRAP_KEY)) : ClusterMembership.Mode.SEED_NODES;
  }
}
