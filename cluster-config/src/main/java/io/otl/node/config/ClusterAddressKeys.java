package io.otl.node.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.AddressFromURIString;

/**
 * The Pekko keys the node's own variables set: its cluster address ({@code OTL_HOSTNAME},
 * {@code OTL_CLUSTER_PORT}) and its seed nodes ({@code OTL_SEED_NODES}). Pekko checks them only once
 * the node has created its journal and is starting remoting, and then named neither key nor variable:
 * {@code OTL_CLUSTER_PORT=abc} stopped with "env variables: port has type STRING rather than NUMBER",
 * {@code OTL_SEED_NODES=node1:25520} with "java.lang.RuntimeException (without a message)". Checked
 * here with the node's other settings, so a wrong value stops the start before anything is written.
 */
public final class ClusterAddressKeys {
  private ClusterAddressKeys() {}

  /** The name of the node's actor system: every seed node's address names it. */
  public static final String SYSTEM = "otl";
  static final String HOSTNAME = "pekko.remote.artery.canonical.hostname";
  public static final String PORT = "pekko.remote.artery.canonical.port";
  static final String SEED_NODES = "pekko.cluster.seed-nodes";
  static final String SEED_NODES_VARIABLE = "OTL_SEED_NODES";

  /** The seed nodes {@code OTL_SEED_NODES} lists (comma-separated), or empty when it is unset or blank. */
  public static List<String> seedNodes(String variable) {
    if (variable == null || variable.isBlank()) return List.of();
    return Arrays.stream(variable.split(",")).map(String::trim).toList();
  }

  /** One sentence per wrong value, naming the key and, when it came from one, the variable. */
  static List<String> errors(Config merged, Map<String, String> env) {
    SettingsCheck check = new SettingsCheck(merged);
    if (merged.hasPath(HOSTNAME)) {
      ConfigValue v = merged.getValue(HOSTNAME);
      Object host = v.unwrapped();
      if (!(host instanceof String s) || s.isBlank() || s.chars().anyMatch(Character::isWhitespace)) {
        check.error(HOSTNAME, v, "a host name or IP address other nodes reach this node at, without white space");
      }
    }
    if (merged.hasPath(PORT)) {
      ConfigRules.integerBetween(0, 65535).check(check, PORT, merged.getValue(PORT));
    }
    List<String> fromEnv = seedNodes(env.get(SEED_NODES_VARIABLE));
    List<ConfigValue> seeds = new ArrayList<>();
    if (!fromEnv.isEmpty()) {
      fromEnv.forEach(s -> seeds.add(ConfigValueFactory.fromAnyRef(s, "environment variable " + SEED_NODES_VARIABLE)));
    } else if (merged.hasPath(SEED_NODES)) {
      List<ConfigValue> listed = check.list(SEED_NODES, merged.getValue(SEED_NODES), "a list of addresses");
      if (listed != null) seeds.addAll(listed);
    }
    for (ConfigValue seed : seeds) {
      if (!isNodeAddress(seed.unwrapped())) {
        check.error(SEED_NODES, seed, "a list of node addresses pekko://" + SYSTEM + "@<host>:<port> (the "
            + "cluster port of each seed node; " + SEED_NODES_VARIABLE + " separates them with commas)");
      }
    }
    return check.errors;
  }

  private static boolean isNodeAddress(Object value) {
    if (!(value instanceof String s)) return false;
    try {
      Address a = AddressFromURIString.parse(s);
      return a.protocol().equals("pekko") && a.system().equals(SYSTEM) && a.host().isDefined()
          && a.port().isDefined() && (Integer) a.port().get() > 0 && (Integer) a.port().get() <= 65535;
    } catch (Exception notAnAddress) { // Pekko throws java.net.MalformedURLException, undeclared
      return false;
    }
  }
}
