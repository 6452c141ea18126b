package io.otl.node.config;

import com.typesafe.config.Config;
import java.util.List;
import java.util.Map;

/**
 * What {@code cluster.bootstrap = management} needs beside it: a discovery method and no seed nodes.
 * Checked with the node's other settings: {@code OTL_CLUSTER_BOOTSTRAP=management} without a discovery
 * method was refused only once the node had claimed (and created) its {@code ./data} folder and started
 * its actor system (trial t61); a refused start writes nothing.
 */
final class ClusterBootstrapKeys {
  private ClusterBootstrapKeys() {}

  static final String BOOTSTRAP = TrainingSettingsValidator.ROOT + ".cluster.bootstrap";
  static final String DISCOVERY_METHOD = "pekko.management.cluster.bootstrap.contact-point-discovery.discovery-method";
  private static final String PEKKO_DISCOVERY_METHOD = "pekko.discovery.method";

  /** One sentence per contradiction, naming the keys (and the variable that chose management). */
  static List<String> errors(Config merged, Map<String, String> env) {
    if (!merged.hasPath(BOOTSTRAP) || !"management".equals(String.valueOf(merged.getValue(BOOTSTRAP).unwrapped()).trim())) {
      return List.of();
    }
    SettingsCheck check = new SettingsCheck(merged);
    int seeds = seedCount(merged, env);
    if (seeds > 0) {
      check.error(BOOTSTRAP, merged.getValue(BOOTSTRAP), "seed-nodes, or management with "
          + ClusterAddressKeys.SEED_NODES + " = [] and " + ClusterAddressKeys.SEED_NODES_VARIABLE + " unset (found "
          + seeds + " seed node(s)): cluster bootstrap finds its peers through Pekko Discovery instead");
    }
    if (!hasDiscoveryMethod(merged)) {
      check.error(BOOTSTRAP, merged.getValue(BOOTSTRAP), "seed-nodes, or management with a discovery method: set "
          + DISCOVERY_METHOD + " (e.g. config, with pekko.discovery.config.services.<service-name>.endpoints)");
    }
    return check.errors;
  }

  /** The seed nodes OTL_SEED_NODES or the file lists (a list that is none is ClusterAddressKeys' to report). */
  private static int seedCount(Config merged, Map<String, String> env) {
    List<String> fromEnv = ClusterAddressKeys.seedNodes(env.get(ClusterAddressKeys.SEED_NODES_VARIABLE));
    if (!fromEnv.isEmpty()) return fromEnv.size();
    try {
      return merged.hasPath(ClusterAddressKeys.SEED_NODES) ? merged.getList(ClusterAddressKeys.SEED_NODES).size() : 0;
    } catch (com.typesafe.config.ConfigException.WrongType notAList) {
      return 0;
    }
  }

  /** Pekko's defaults are the placeholder {@code <method>}: no method chosen. */
  private static boolean hasDiscoveryMethod(Config merged) {
    if (!merged.hasPath(DISCOVERY_METHOD)) return false;
    String method = merged.getString(DISCOVERY_METHOD).trim();
    if ("pekko.discovery".equals(method)) {
      method = merged.hasPath(PEKKO_DISCOVERY_METHOD) ? merged.getString(PEKKO_DISCOVERY_METHOD).trim() : "";
    }
    return !method.isEmpty() && !method.startsWith("<");
  }
}
