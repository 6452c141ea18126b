package io.otl.core.testing;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;

/**
 * The actor system the entity tests share in shape: the in-memory persistence testkit with every
 * event and snapshot serialized through Jackson as the node does, so a type that cannot round-trip
 * fails the test that writes it.
 */
public final class EntityTestKits {

  public static final Config CONFIG =
      ConfigFactory.parseString(
              "pekko.persistence.testkit.events.serialize = on\n"
                  + "pekko.persistence.testkit.snapshots.serialize = on\n"
                  + "pekko.actor.serialization-bindings {\"io.otl.core.JsonSerializable\" = jackson-json}")
          .withFallback(EventSourcedBehaviorTestKit.config())
          .withFallback(ConfigFactory.load());

  private EntityTestKits() {}

  /** A test kit named after the test; the journal's DEBUG lines stay out of the output. */
  public static ActorTestKit start(String name) {
    ((ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME))
        .setLevel(ch.qos.logback.classic.Level.INFO);
    return ActorTestKit.create(name, CONFIG);
  }

  /** The {@code agentscope.training} defaults with {@code model-update { overrides }} on top. */
  public static Config training(String modelUpdateOverrides) {
    return ConfigFactory.parseString("model-update { " + modelUpdateOverrides + " }")
        .withFallback(ConfigFactory.load().getConfig("agentscope.training"));
  }
}
