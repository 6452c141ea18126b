package io.otl.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;

/**
 * The node's configuration stack, highest first: -D system properties, the caller's overrides
 * (a --config file, an embedding application's settings), application.conf, the node's Pekko
 * settings (otl-node.conf), then every module's reference.conf.
 *
 * <p>The node's Pekko settings cannot live in reference.conf: once jars are shaded together the
 * order in which reference.conf files are concatenated is not ours, and Pekko's own defaults
 * (e.g. {@code actor.provider = local}) would win.
 */
public final class NodeDefaults {
  private NodeDefaults() {}

  public static Config load(Config overrides) {
    ConfigFactory.invalidateCaches();
    return ConfigFactory.defaultOverrides()
        .withFallback(overrides)
        .withFallback(ConfigFactory.defaultApplication())
        .withFallback(ConfigFactory.parseResources("otl-node.conf"))
        .withFallback(ConfigFactory.defaultReference())
        .resolve();
  }
}
