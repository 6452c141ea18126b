package io.otl.node.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.session.AgentSession;
import io.otl.persistence.schema.LegacyJacksonJsonSerializer;
import io.otl.persistence.schema.PersistedSerializer;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.Test;

/**
 * The node's configuration stack (NodeConfig) writes events under logical names and reads rows of
 * release 0.1.0 through the registry, whatever order the jars' reference.conf files come in.
 */
class NodeSerializationConfigTest {
  @Test
  void eventsGetLogicalNamesAndJacksonJsonReadsLegacyRows() throws Exception {
    Config node = NodeConfig.resolve(Optional.empty(), ConfigFactory.parseMap(Map.of(
        "pekko.actor.provider", "local", "pekko.remote.artery.canonical.port", 0)), Map.of());
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "serialization", node);
    try {
      Serialization s = SerializationExtension.get(system);
      var event = new AgentSession.TaskResultRecorded("e1", Instant.EPOCH, Instant.EPOCH,
          io.otl.core.session.SessionModel.TaskStatus.SUCCESS, null);
      var serializer = s.findSerializerFor(event);
      assertEquals(PersistedSerializer.IDENTIFIER, serializer.identifier());
      assertEquals("session.task-result-recorded#1", Serializers.manifestFor(serializer, event));
      assertInstanceOf(LegacyJacksonJsonSerializer.class, s.serializerByIdentity().apply(31));
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }
}
