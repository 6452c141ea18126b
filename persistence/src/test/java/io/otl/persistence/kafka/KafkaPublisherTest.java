package io.otl.persistence.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionInput;
import io.otl.persistence.JournalSchema;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The publishers put on Kafka what the journal says, resume from their stored offset, and lose nothing. */
class KafkaPublisherTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Duration LIMIT = Duration.ofSeconds(60);
  private static KafkaTestBroker broker;

  @BeforeAll
  static void startBroker() throws Exception {
    broker = KafkaTestBroker.start(2, "traj", "mu", "traj-poison", "traj-big");
  }

  @AfterAll
  static void stopBroker() throws Exception {
    if (broker != null) broker.close();
  }

  @Test
  void trajectoriesCarryTheJournalsTrajectoriesAndResumeAfterARestartWithoutGapsOrRepeats(@TempDir Path dir)
      throws Exception {
    Map<String, AgentSession.State> finalStates = new LinkedHashMap<>();
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaSettings settings = node.kafka(broker, Map.of("topics.trajectories", "traj"));
      KafkaPublisher.startTrajectories(node.system, settings);
      for (int i = 0; i < 20; i++) session(node, "t-" + i, i);
      for (int i = 0; i < 5; i++) {
        node.collector.feedback("t-" + i, "agent-t", "THUMBS_DOWN", null, "fb-late-" + i)
            .toCompletableFuture().get(10, TimeUnit.SECONDS);
      }
      List<ConsumerRecord<String, String>> published = broker.readAll("traj", 25, LIMIT, Duration.ofMillis(500));
      assertEquals(25, published.size(), "20 completions and 5 revisions");
      for (int i = 0; i < 20; i++) {
        finalStates.put("t-" + i, node.collector.trajectory("t-" + i).toCompletableFuture().get(10, TimeUnit.SECONDS)
            .orElseThrow());
      }
      for (ConsumerRecord<String, String> r : published) {
        JsonNode v = JSON.readTree(r.value());
        String session = r.key();
        AgentSession.State state = finalStates.get(session);
        assertEquals(session, v.get("sessionId").asText());
        assertEquals("agent-t", v.get("agentId").asText());
        assertEquals("v" + (Integer.parseInt(session.substring(2)) % 2), v.get("modelVersion").asText());
        // The SFT export shape (design §7.2): the exporter's line for the same session, field for field.
        io.otl.persistence.export.Trajectory.Builder b = new io.otl.persistence.export.Trajectory.Builder(session);
        node.journalEvents("AgentSession|" + session).forEach(e -> b.add((AgentSession.Event) e));
        JsonNode sft = JSON.readTree(io.otl.persistence.export.JsonlFormats.sft(b.build()).orElseThrow());
        assertEquals(sft.get("messages"), v.get("messages"), "messages of " + session);
        assertEquals(sft.get("tools"), v.get("tools"), "tools of " + session);
        assertEquals("search", v.get("tools").get(0).get("function").get("name").asText());
        boolean revision = v.get("revision").asBoolean();
        assertEquals(session + (revision ? ":reward:feedback:fb-late-" + session.substring(2) : ":completed"),
            v.get("id").asText());
        boolean revisedLater = Integer.parseInt(session.substring(2)) < 5;
        if (revision || !revisedLater) {
          // The latest word on this trajectory: what the session holds now.
          assertEquals(state.reward(), v.get("reward").asDouble(), 1e-9, "reward of " + session);
          assertEquals(state.qualityScore(), v.get("qualityScore").asDouble(), 1e-9, "quality of " + session);
        } else {
          assertTrue(v.get("reward").asDouble() > state.reward(), "the completion's reward, before the thumbs down");
        }
      }
      // Let the publisher store its offset (everything acknowledged) before the node stops.
      long lastTagged = lastTaggedOrdering(node, AgentSession.TRAJECTORY_TAG);
      KafkaIngestTest.await("offset stored", () -> storedOffset(node, "traj") >= lastTagged);
    }
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaPublisher.startTrajectories(node.system, node.kafka(broker, Map.of("topics.trajectories", "traj")));
      for (int i = 20; i < 25; i++) session(node, "t-" + i, i);
      List<ConsumerRecord<String, String>> all = broker.readAll("traj", 30, LIMIT, Duration.ofSeconds(1));
      Set<String> ids = new HashSet<>();
      for (ConsumerRecord<String, String> r : all) ids.add(JSON.readTree(r.value()).get("id").asText());
      assertEquals(30, ids.size(), "every completion and revision published");
      assertEquals(30, all.size(), "nothing published twice after a clean restart");
    }
  }

  @Test
  void modelUpdatesCarryEveryTransitionWithTheRoutingTableAfterIt(@TempDir Path dir) throws Exception {
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaPublisher.startModelUpdates(node.system, node.kafka(broker, Map.of("topics.model-updates", "mu")));
      var model = node.sharding.entityRefFor(ModelVersion.ENTITY_TYPE_KEY, "agent-m");
      Duration t = Duration.ofSeconds(10);
      model.<ModelVersion.TransitionReply>ask(r -> new ModelVersion.RegisterManual("v1", "s3://m/v1", "http://v1", r), t)
          .toCompletableFuture().get(10, TimeUnit.SECONDS);
      model.<ModelVersion.TransitionReply>ask(r -> new ModelVersion.RegisterManual("v2", "s3://m/v2", "http://v2", r), t)
          .toCompletableFuture().get(10, TimeUnit.SECONDS);
      ModelVersion.ModelsView during = model.<ModelVersion.ModelsView>ask(ModelVersion.Get::new, t)
          .toCompletableFuture().get(10, TimeUnit.SECONDS);
      long rowsDuring = node.rows("ModelVersion|agent-m");
      List<ConsumerRecord<String, String>> first = broker.readAll("mu", (int) rowsDuring, LIMIT, Duration.ZERO);
      assertEquals(rowsDuring, first.size(), "one record per transition");
      JsonNode last = JSON.readTree(first.get(first.size() - 1).value());
      assertEquals("RolloutStarted", last.get("type").asText());
      JsonNode routing = last.get("routing");
      assertEquals(during.stable(), routing.get("stable").asText());
      assertEquals(during.candidate(), routing.get("candidate").asText());
      assertEquals("http://v2", routing.get("candidateEndpoint").asText());
      assertEquals("http://v1", routing.get("stableEndpoint").asText());
      double candidateRatio = during.versions().stream().filter(v -> v.version().equals("v2")).findFirst()
          .orElseThrow().ratio();
      assertEquals(candidateRatio, routing.get("candidateRatio").asDouble(), 1e-9);

      model.<ModelVersion.TransitionReply>ask(r -> new ModelVersion.Rollback("v2", "operator test", r), t)
          .toCompletableFuture().get(10, TimeUnit.SECONDS);
      long rows = node.rows("ModelVersion|agent-m");
      List<ConsumerRecord<String, String>> all = broker.readAll("mu", (int) rows, LIMIT, Duration.ofMillis(500));
      assertEquals(rows, all.size());
      List<String> types = new ArrayList<>();
      for (int i = 0; i < all.size(); i++) {
        ConsumerRecord<String, String> r = all.get(i);
        JsonNode v = JSON.readTree(r.value());
        assertEquals("agent-m", r.key());
        assertEquals("ModelVersion|agent-m:" + (i + 1), v.get("id").asText(), "ids follow the journal");
        assertEquals(v.get("type").asText(), journalType(node, "ModelVersion|agent-m", i + 1));
        assertTrue(v.get("event").has("at"));
        types.add(v.get("type").asText());
        if (v.get("type").asText().equals("VersionPromoted")) {
          assertEquals("v1", v.get("routing").get("stable").asText());
          assertTrue(v.get("routing").get("candidate").isNull());
        }
      }
      assertTrue(types.contains("VersionRegistered") && types.contains("VersionPromoted"), types.toString());
      JsonNode afterRollback = JSON.readTree(all.get(all.size() - 1).value());
      assertEquals("VersionRolledBack", afterRollback.get("type").asText());
      assertEquals("v2", afterRollback.get("version").asText());
      assertEquals("v1", afterRollback.get("routing").get("stable").asText());
      assertTrue(afterRollback.get("routing").get("candidate").isNull());
      assertEquals(0.0, afterRollback.get("routing").get("candidateRatio").asDouble());
      assertTrue(afterRollback.get("event").get("reason").asText().contains("operator test"));
    }
  }

  /**
   * Trial t16: a trajectories topic nobody created showed only as the producer's warnings each second
   * and, a minute later, a restart naming no key. Now it is named with its key, nothing is published
   * while it is missing, and publishing starts once it exists, from the first trajectory.
   */
  @Test
  void aMissingTopicIsNamedWithItsKeyAndPublishingStartsOnceItExists(@TempDir Path dir) throws Exception {
    try (LoggedLines logged = new LoggedLines(KafkaPublisher.class); TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaPublisher.startTrajectories(node.system, node.kafka(broker, Map.of("topics.trajectories", "traj-late")));
      session(node, "late-0", 0);
      long deadline = System.nanoTime() + LIMIT.toNanos();
      while (!logged.contain("Kafka topic 'traj-late' (agentscope.training.kafka.topics.trajectories) does not exist")) {
        assertTrue(System.nanoTime() < deadline, "the missing topic named: " + logged.lines());
        Thread.sleep(100);
      }
      broker.createTopics(2, "traj-late");
      List<ConsumerRecord<String, String>> published = broker.readAll("traj-late", 1, LIMIT, Duration.ofMillis(500));
      assertEquals(1, published.size());
      assertEquals("late-0", published.get(0).key());
    }
  }

  /**
   * Trial t36: the topic deleted under a running publisher. Its sends waited out the producer's
   * delivery timeout, and each restart went straight back to sending (the topic had been confirmed
   * once), naming nothing. Now a failed attempt asks the broker again: the topic is named, and what
   * the journal holds is published once it exists again.
   */
  @Test
  void aTopicDeletedUnderThePublisherIsNamedAndPublishingGoesOnOnceItExistsAgain(@TempDir Path dir)
      throws Exception {
    broker.createTopics(2, "traj-gone");
    try (LoggedLines logged = new LoggedLines(KafkaPublisher.class); TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaPublisher.startTrajectories(node.system, node.kafka(broker, Map.of("topics.trajectories", "traj-gone",
          // the failed send is seen within seconds instead of Kafka's two minutes
          "client.delivery.timeout.ms", "6000", "client.request.timeout.ms", "5000", "client.max.block.ms", "5000")));
      session(node, "gone-0", 0);
      assertEquals(1, broker.readAll("traj-gone", 1, LIMIT, Duration.ofMillis(500)).size());
      broker.deleteTopics("traj-gone");
      session(node, "gone-1", 1);
      long deadline = System.nanoTime() + LIMIT.toNanos();
      while (!logged.contain("Kafka topic 'traj-gone' (agentscope.training.kafka.topics.trajectories) does not exist")) {
        assertTrue(System.nanoTime() < deadline, "the deleted topic named: " + logged.lines());
        Thread.sleep(100);
      }
      broker.createTopics(2, "traj-gone");
      List<ConsumerRecord<String, String>> published = broker.readAll("traj-gone", 1, LIMIT, Duration.ofSeconds(1));
      assertEquals(List.of("gone-1"), published.stream().map(ConsumerRecord::key).toList(),
          "the trajectory completed while the topic was gone, published once it exists again");
    }
  }

  @Test
  void aSessionWithAnUnreadableEventIsSkippedAndLaterTrajectoriesStillFlow(@TempDir Path dir) throws Exception {
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      session(node, "p-0", 0);
      session(node, "p-1", 1);
      // issue #14: tool input nested past Jackson's read limit, written straight into the journal
      String marker = "{\"q\":1}";
      String deep = "{\"a\":".repeat(1199) + "{}" + "}".repeat(1199);
      try (Connection c = JournalSchema.connect(node.journal);
          PreparedStatement ps = c.prepareStatement("UPDATE event_journal SET event_payload = ? "
              + "WHERE persistence_id = 'AgentSession|p-1' AND sequence_number = 3")) {
        try (PreparedStatement read = c.prepareStatement(
            "SELECT event_payload FROM event_journal WHERE persistence_id = 'AgentSession|p-1' AND sequence_number = 3");
            ResultSet rs = read.executeQuery()) {
          assertTrue(rs.next());
          String payload = new String(rs.getBytes(1), StandardCharsets.UTF_8);
          assertTrue(payload.contains(marker), payload);
          ps.setBytes(1, payload.replace(marker, deep).getBytes(StandardCharsets.UTF_8));
        }
        assertEquals(1, ps.executeUpdate());
      }
      KafkaPublisher.startTrajectories(node.system, node.kafka(broker, Map.of("topics.trajectories", "traj-poison")));
      session(node, "p-2", 2);
      List<ConsumerRecord<String, String>> published = broker.readAll("traj-poison", 2, LIMIT, Duration.ofSeconds(1));
      assertEquals(List.of("p-0", "p-2"), published.stream().map(ConsumerRecord::key).sorted().toList(),
          "the poisoned session is left out; the ones after it are published");
    }
  }

  /**
   * Trial t64: a session of twenty 60,000-character turns (each within max-text-length, each
   * accepted) made a trajectory record of 1.2 MB, over the producer's max.request.size. The send
   * failed on every restart of the stream and no later trajectory was ever published. It is now
   * published without its messages and tools (messagesOmitted gives the size), and the ones after it flow.
   */
  @Test
  void aTrajectoryOverTheRecordSizeLimitIsPublishedWithoutItsTurnsAndLaterOnesStillFlow(@TempDir Path dir)
      throws Exception {
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaPublisher.startTrajectories(node.system, node.kafka(broker, Map.of("topics.trajectories", "traj-big")));
      String turn = "lorem ipsum dolor sit amet ".repeat(2200);
      for (int batch = 0; batch < 4; batch++) {
        List<SessionInput> inputs = new java.util.ArrayList<>();
        for (int i = 0; i < 5; i++) {
          inputs.add(new SessionInput.Message("m" + batch + "-" + i, null, i % 2 == 0 ? "user" : "assistant", turn,
              null, null));
        }
        node.collector.record("big-0", "agent-t", inputs).toCompletableFuture().get(10, TimeUnit.SECONDS);
      }
      node.collector.record("big-0", "agent-t", List.of(new SessionInput.Result("r", null, "SUCCESS", "ok")))
          .toCompletableFuture().get(10, TimeUnit.SECONDS);
      session(node, "after-big", 1);

      List<ConsumerRecord<String, String>> published = broker.readAll("traj-big", 2, LIMIT, Duration.ofSeconds(1));
      Map<String, JsonNode> byKey = new LinkedHashMap<>();
      for (ConsumerRecord<String, String> r : published) byKey.put(r.key(), JSON.readTree(r.value()));
      assertEquals(java.util.Set.of("big-0", "after-big"), byKey.keySet());
      assertEquals(2, published.size());
      JsonNode big = byKey.get("big-0");
      assertTrue(big.path("messages").isMissingNode() && big.path("tools").isMissingNode(), big.toString());
      assertTrue(big.get("messagesOmitted").asLong() > 1_048_576, big.toString());
      assertEquals("big-0:completed", big.get("id").asText());
      assertEquals(1.0, big.get("reward").asDouble());
      assertEquals("SUCCESS", big.get("status").asText());
      assertTrue(byKey.get("after-big").get("messages").size() > 0, "the next one whole");
    }
  }

  private static void session(TestNode node, String id, int i) throws Exception {
    node.collector.record(id, "agent-t", List.of(
            new SessionInput.Start("s", null, "1.0", "v" + (i % 2), Map.of()),
            new SessionInput.Message("u", null, "user", "question " + i, null, null),
            new SessionInput.ToolCall("t", null, "c1", "search", JSON.readTree("{\"q\":" + i + "}"),
                JSON.readTree("{\"hits\":1}"), true, 20L),
            new SessionInput.Message("a", null, "assistant", "answer " + i, "chatcmpl-" + i, 300L),
            new SessionInput.Result("r", null, "SUCCESS", "ok")))
        .toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static long lastTaggedOrdering(TestNode node, String tag) throws Exception {
    try (Connection c = JournalSchema.connect(node.journal);
        PreparedStatement ps = c.prepareStatement("SELECT MAX(event_id) FROM event_tag WHERE tag = ?")) {
      ps.setString(1, tag);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getLong(1);
      }
    }
  }

  private static final Pattern OFFSET = Pattern.compile("\"offset\":(\\d+)");

  /** The publisher's stored offset, read from its journal rows. */
  private static long storedOffset(TestNode node, String topic) throws Exception {
    try (Connection c = JournalSchema.connect(node.journal);
        PreparedStatement ps = c.prepareStatement(
            "SELECT event_payload FROM event_journal WHERE persistence_id = ? ORDER BY sequence_number DESC")) {
      ps.setString(1, KafkaPublisherOffset.persistenceId(topic).id());
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) return 0;
        Matcher m = OFFSET.matcher(new String(rs.getBytes(1), StandardCharsets.UTF_8));
        return m.find() ? Long.parseLong(m.group(1)) : 0;
      }
    }
  }

  private static String journalType(TestNode node, String pid, long seqNr) throws Exception {
    try (Connection c = JournalSchema.connect(node.journal);
        PreparedStatement ps = c.prepareStatement(
            "SELECT event_ser_manifest FROM event_journal WHERE persistence_id = ? AND sequence_number = ?")) {
      ps.setString(1, pid);
      ps.setLong(2, seqNr);
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next(), pid + " " + seqNr);
        String manifest = rs.getString(1);
        // a logical manifest (name#version) names its class through the registry
        String name = manifest.contains("#") ? manifest.substring(0, manifest.indexOf('#')) : manifest;
        return io.otl.persistence.schema.PersistedTypes.ALL.byName(name).<String>map(t -> t.type().getSimpleName())
            .orElse(manifest.substring(Math.max(manifest.lastIndexOf('$'), manifest.lastIndexOf('.')) + 1));
      }
    }
  }

}
