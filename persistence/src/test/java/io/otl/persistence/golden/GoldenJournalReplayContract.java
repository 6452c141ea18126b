package io.otl.persistence.golden;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.typesafe.config.Config;
import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionInput;
import io.otl.core.session.SessionSettings;
import io.otl.persistence.JournalSchema;
import io.otl.persistence.JournalSettings;
import io.otl.persistence.kafka.KafkaPublisherOffset;
import io.otl.persistence.readside.FeedOffsetStore;
import io.otl.persistence.schema.LegacyJacksonJsonSerializer;
import io.otl.persistence.schema.PersistedSerializer;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.zip.GZIPInputStream;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.Test;

/**
 * Every golden journal (one per release, src/test/resources/golden/) replayed by today's code
 * reaches the states recorded with it: once with the rows exactly as that release stored them
 * (v0.1.0: jackson-json, class-name manifests: the legacy path) and once with the same events and
 * snapshots rewritten by today's serializer (logical manifests: the new path).
 */
abstract class GoldenJournalReplayContract {

  /** Overrides selecting a fresh, empty journal database. */
  protected abstract Config database() throws Exception;

  @Test
  void goldenRowsAsStoredReplayToTheRecordedStates() throws Exception {
    for (String release : GoldenFiles.releases()) replay(release, false);
  }

  @Test
  void goldenRowsRewrittenWithLogicalNamesReplayToTheRecordedStates() throws Exception {
    for (String release : GoldenFiles.releases()) replay(release, true);
  }

  /**
   * The audit and export read (the journal table, directly) gives what the read journal gives,
   * event by event, for the rows of every release as stored and as rewritten today.
   */
  @Test
  void goldenRowsReadTheSameThroughTheAuditPathAsThroughTheReadJournal() throws Exception {
    for (String release : GoldenFiles.releases()) {
      readPaths(release, false);
      readPaths(release, true);
    }
  }

  private void readPaths(String release, boolean rewrite) throws Exception {
    try (Journal journal = journal("read")) {
      List<GoldenFiles.Fixture> fixtures = fixtures(journal.system(), release, rewrite);
      fixtures.addAll(ReadPathEquivalence.synthetic(fixtures.get(0)));
      journal.load(fixtures);
      ReadPathEquivalence.check(journal.system(), journal.training(), fixtures,
          release + (rewrite ? " (rewritten)" : " (as stored)"));
    }
  }

  /**
   * A client retries, after the upgrade, a message it sent to release 0.1.0 without an eventId:
   * the session stored it under the 0.1.0 derivation ({@code d:} id) and must not store it again
   * under the canonical one ({@code d2:}).
   */
  @Test
  void aRetryOfAnInputStoredBy010UnderADerivedIdIsADuplicate() throws Exception {
    try (Journal journal = journal("retry")) {
      journal.load(List.of(GoldenFiles.read("v0.1.0", "AgentSession")));
      ActorSystem<Void> system = journal.system();
      ActorRef<AgentSession.Command> s1 = system.systemActorOf(AgentSession.create("golden-s1",
          SessionSettings.fromConfig(journal.training()), Clock.systemUTC(), null), "s1", Props.empty());
      SessionInput retry = new SessionInput.Message(null, null, "user", "How do I reset my password?", "msg-1", null);
      AgentSession.RecordReply reply = AskPattern.<AgentSession.Command, AgentSession.RecordReply>ask(s1,
          r -> new AgentSession.Record("golden-agent", List.of(retry), r), Duration.ofSeconds(30), system.scheduler())
          .toCompletableFuture().get(60, TimeUnit.SECONDS);
      assertEquals(new AgentSession.Recorded(0, 1, true), reply);
    }
  }

  private void replay(String release, boolean rewrite) throws Exception {
    try (Journal journal = journal("replay")) {
      ActorSystem<Void> system = journal.system();
      // The legacy path is the node's jackson-json binding, which reads v0.1.0 rows through the registry.
      assertInstanceOf(LegacyJacksonJsonSerializer.class,
          SerializationExtension.get(system).serializerByIdentity().apply(31));
      List<GoldenFiles.Fixture> fixtures = fixtures(system, release, rewrite);
      journal.load(fixtures);
      for (GoldenFiles.Fixture f : fixtures) {
        for (Map.Entry<String, JsonNode> e : f.states().entrySet()) {
          JsonNode now = GoldenFiles.JSON.readTree(recover(system, PersistenceId.ofUniqueId(e.getKey())).toString());
          String where = release + " " + e.getKey() + (rewrite ? " (rewritten)" : " (as stored)");
          String difference = StateMatch.difference(e.getValue(), now, "");
          if (difference != null) {
            // the full renderings, for the diff view of the IDE or the report
            assertEquals(GoldenFiles.JSON.writeValueAsString(e.getValue()), GoldenFiles.JSON.writeValueAsString(now),
                where + " replays to another state than recorded: " + difference);
          }
        }
      }
    }
  }

  /** A fresh journal database ({@link #database()}) and an actor system on it, terminated on close. */
  private record Journal(Config base, JournalSettings settings, ActorSystem<Void> system) implements AutoCloseable {
    Config training() {
      return base.getConfig("agentscope.training");
    }

    void load(List<GoldenFiles.Fixture> fixtures) throws SQLException {
      try (Connection c = JournalSchema.connect(settings)) {
        for (GoldenFiles.Fixture f : fixtures) GoldenFiles.load(c, f);
      }
    }

    @Override
    public void close() throws Exception {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private Journal journal(String systemName) throws Exception {
    Config base = GoldenNode.config(database());
    JournalSettings settings = JournalSettings.fromConfig(base.getConfig("agentscope.training"));
    JournalSchema.ensure(settings);
    return new Journal(base, settings,
        ActorSystem.create(Behaviors.empty(), systemName, settings.pekkoConfig().withFallback(base)));
  }

  /** Every entity's fixture of {@code release}: as that release stored it, or rewritten by today's serializers. */
  private static List<GoldenFiles.Fixture> fixtures(ActorSystem<?> system, String release, boolean rewrite)
      throws IOException {
    List<GoldenFiles.Fixture> fixtures = new ArrayList<>();
    for (String entity : GoldenFiles.ENTITIES) {
      GoldenFiles.Fixture f = GoldenFiles.read(release, entity);
      fixtures.add(rewrite ? rewritten(system, f) : f);
    }
    return fixtures;
  }

  /**
   * The fixture's events and snapshots read back (through the path their serializer id and
   * manifest select) and written again by today's serializers: they must land on the logical-name
   * serializer with the same JSON, so only the manifest and the serializer id change.
   */
  private static GoldenFiles.Fixture rewritten(ActorSystem<?> system, GoldenFiles.Fixture f) throws IOException {
    Serialization serialization = SerializationExtension.get(system);
    List<GoldenFiles.Row> rows = new ArrayList<>();
    for (GoldenFiles.Row r : f.rows()) {
      Object event = serialization.deserialize(r.payload(), r.serializerId(), r.manifest()).get();
      byte[] bytes = serialization.serialize(event).get();
      var serializer = serialization.findSerializerFor(event);
      String manifest = Serializers.manifestFor(serializer, event);
      assertEquals(PersistedSerializer.IDENTIFIER, serializer.identifier(), r.manifest());
      assertTrue(manifest.matches("[a-z0-9.-]+#\\d+"), "logical manifest expected for " + r.manifest() + ": " + manifest);
      assertArrayEquals(plain(r.payload()), plain(bytes), "JSON of " + r.manifest() + " changed");
      rows.add(new GoldenFiles.Row(r.persistenceId(), r.sequenceNumber(), r.deleted(), serializer.identifier(),
          manifest, r.adapterManifest(), r.tags(), bytes));
    }
    List<GoldenFiles.Snapshot> snapshots = new ArrayList<>();
    for (GoldenFiles.Snapshot s : f.snapshots()) {
      Object state = serialization.deserialize(s.payload(), s.serializerId(), s.manifest()).get();
      var serializer = serialization.findSerializerFor(state);
      byte[] bytes = serialization.serialize(state).get();
      assertEquals(PersistedSerializer.IDENTIFIER, serializer.identifier(), s.manifest());
      // Not compared with the stored bytes: a state's sets come back as hash sets, in another order.
      byte[] legacy = serialization.serializerByIdentity().apply(31).toBinary(state);
      assertArrayEquals(plain(legacy), plain(bytes), "JSON of snapshot " + s.manifest() + " changed");
      snapshots.add(new GoldenFiles.Snapshot(s.persistenceId(), s.sequenceNumber(), s.created(),
          serializer.identifier(), Serializers.manifestFor(serializer, state), bytes));
    }
    return new GoldenFiles.Fixture(f.release(), f.entity(), rows, snapshots, f.states());
  }

  private static byte[] plain(byte[] payload) throws IOException {
    if (payload.length > 2 && (payload[0] & 0xff) == 0x1f && (payload[1] & 0xff) == 0x8b) {
      try (GZIPInputStream in = new GZIPInputStream(new ByteArrayInputStream(payload))) {
        return in.readAllBytes();
      }
    }
    return payload;
  }

  /** The state {@code id} recovers to, rendered as the generator rendered it. */
  private static JsonNode recover(ActorSystem<?> system, PersistenceId id) throws Exception {
    String entity = id.entityTypeHint();
    String key = id.entityId();
    Object state = switch (entity) {
      case "AgentSession" -> GoldenNode.recover(system, id, AgentSession.State.empty(), AgentSession.State::apply);
      case "TrainingCoordinator" ->
          GoldenNode.recover(system, id, TrainingCoordinator.State.EMPTY, TrainingCoordinator::applyEvent);
      case "ModelVersion" -> GoldenNode.recover(system, id, ModelVersion.initialState(), ModelVersion::applyEvent);
      case "KafkaOffset" -> {
        ActorRef<KafkaPublisherOffset.Command> k = system.systemActorOf(KafkaPublisherOffset.create(key),
            "k-" + UUID.randomUUID(), Props.empty());
        KafkaPublisherOffset.Current c = AskPattern.ask(k, KafkaPublisherOffset.Get::new, Duration.ofSeconds(30),
            system.scheduler()).toCompletableFuture().get(60, TimeUnit.SECONDS);
        yield JsonNodeFactory.instance.objectNode().put("offset", c.offset());
      }
      case "FeedOffset" -> {
        ActorRef<FeedOffsetStore.Command> f = system.systemActorOf(FeedOffsetStore.create(key, Duration.ofMinutes(5)),
            "f-" + UUID.randomUUID(), Props.empty());
        yield AskPattern.ask(f, FeedOffsetStore.Get::new, Duration.ofSeconds(30), system.scheduler())
            .toCompletableFuture().get(60, TimeUnit.SECONDS);
      }
      default -> throw new IllegalStateException("no replay for entity type " + entity + " (" + id.id() + ")");
    };
    return state instanceof JsonNode j ? j : GoldenNode.render(system, state);
  }
}
