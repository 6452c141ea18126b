package io.otl.persistence.golden;

import io.otl.core.testing.ManualClock;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionSettings;
import io.otl.persistence.JournalSchema;
import io.otl.persistence.JournalSettings;
import io.otl.persistence.kafka.KafkaPublisherOffset;
import io.otl.persistence.readside.FeedOffsetStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.japi.function.Function;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.junit.jupiter.api.Test;

/**
 * Writes the golden journal of the code it is compiled with: runs the entities on a fresh H2
 * journal, dumps every journal and snapshot row of each entity type as stored, records the state
 * each persistence id recovers to, and writes them under {@code src/test/resources/golden/<release>/}.
 * Not a test: its name keeps it out of the default build. Run it once per release, before anything
 * that touches persisted types changes (docs/schema-evolution.md):
 *
 * <pre>
 * mvn -B -o -pl persistence -am test -Dtest=GoldenJournalGenerator -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dotl.golden.release=v0.2.0
 * </pre>
 *
 * All five entity types are driven through their commands (the coordinator on the ray-jobs path,
 * {@link GoldenCoordinatorRun}; ModelVersion also through deployment, {@link GoldenDeployments},
 * since v0.2.0). The coordinator's other paths (failures, retries, cancellation,
 * schedule, trinity-proxy) need scripted ports and timers; those events are built as its command
 * handler builds them ({@link GoldenCoordinatorEvents}) and written through {@link GoldenWriter}
 * with its own pure event handler, so the rows hold exactly what the serializer writes for them.
 */
class GoldenJournalGenerator {
  static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  static final String AGENT = "golden-agent";

  private final ManualClock clock = new ManualClock(T0);
  private ActorSystem<Void> system;

  @Test
  void generate() throws Exception {
    String release = System.getProperty("otl.golden.release", "");
    // a release (v0.2.0), or types added between releases (v0.2.0-deploy): both are kept forever
    if (!release.matches("v\\d+\\.\\d+\\.\\d+(-[a-z0-9]+)?")) {
      throw new IllegalArgumentException("name the journal: -Dotl.golden.release=v<major>.<minor>.<patch>[-<topic>]");
    }
    Path resources = Path.of("src", "test", "resources").toAbsolutePath();
    if (Files.exists(resources.resolve("golden").resolve(release))) {
      throw new IllegalStateException("golden/" + release + " exists: a release's golden journal is never rewritten");
    }
    Path dir = Path.of("target", "golden-generator-" + System.nanoTime()).toAbsolutePath();
    Files.createDirectories(dir);
    Config db = ConfigFactory.parseMap(Map.of(
        "agentscope.training.persistence", "h2",
        "agentscope.training.db.url", "jdbc:h2:file:" + dir.resolve("journal")
            + ";DATABASE_TO_UPPER=false;AUTO_SERVER=TRUE;WRITE_DELAY=0"));
    Config base = GoldenNode.config(db);
    JournalSettings journal = JournalSettings.fromConfig(base.getConfig("agentscope.training"));
    JournalSchema.ensure(journal);
    system = ActorSystem.create(Behaviors.empty(), "golden", journal.pekkoConfig().withFallback(base));
    try {
      Map<String, Map<String, JsonNode>> states = new TreeMap<>();
      states.put("AgentSession", sessions(base));
      states.put("ModelVersion", modelVersions(base));
      states.put("TrainingCoordinator", coordinator());
      states.put("KafkaOffset", kafkaOffsets());
      states.put("FeedOffset", feedOffsets());
      try (Connection c = JournalSchema.connect(journal)) {
        for (String entity : GoldenFiles.ENTITIES) {
          GoldenFiles.write(resources, GoldenFiles.dump(c, release, entity, states.get(entity)));
        }
      }
      System.out.println("golden journal " + release + " written under " + resources.resolve("golden"));
    } finally {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  // ---------------------------------------------------------------- AgentSession

  private Map<String, JsonNode> sessions(Config base) throws Exception {
    SessionSettings settings = SessionSettings.fromConfig(base.getConfig("agentscope.training"));
    ObjectMapper plain = new ObjectMapper();
    // s1: every input kind, a derived id (no eventId), completion, then late feedback (reward revised)
    ActorRef<AgentSession.Command> s1 = system.systemActorOf(
        AgentSession.create("golden-s1", settings, clock, null), "s1", org.apache.pekko.actor.typed.Props.empty());
    record(s1, AGENT, List.of(
        new io.otl.core.session.SessionInput.Start("e-start", T0, "1.4.2", "v1", Map.of("channel", "web")),
        new io.otl.core.session.SessionInput.Message("e-m1", T0.plusSeconds(1), "system", "You are a helpdesk agent.",
            null, null),
        new io.otl.core.session.SessionInput.Message(null, null, "user", "How do I reset my password?", "msg-1",
            null),
        new io.otl.core.session.SessionInput.Reasoning("e-r1", T0.plusSeconds(2), 0, "The user needs the reset flow.",
            "search the knowledge base", "one article found"),
        new io.otl.core.session.SessionInput.ToolCall("e-t1", T0.plusSeconds(3), "call-1", "kb.search",
            plain.readTree("{\"query\":\"password reset\",\"limit\":3}"),
            plain.readTree("{\"hits\":[{\"id\":\"kb-12\",\"score\":0.92}]}"), true, 85L),
        new io.otl.core.session.SessionInput.Message("e-m2", T0.plusSeconds(4), "assistant",
            "Open Settings, then Security, then Reset password.", "msg-2", 640L),
        new io.otl.core.session.SessionInput.Feedback("e-f1", T0.plusSeconds(5), "THUMBS_UP", null, "fb-1", "user"),
        new io.otl.core.session.SessionInput.Result("e-res", T0.plusSeconds(6), "SUCCESS", "resolved")));
    clock.advance(Duration.ofMinutes(10));
    record(s1, null, List.of(
        new io.otl.core.session.SessionInput.Feedback(null, null, "RATING", 4.0, "fb-2", "survey")));
    // s2: more than 100 events, so the session writes a snapshot; no Start (the session starts itself)
    ActorRef<AgentSession.Command> s2 = system.systemActorOf(
        AgentSession.create("golden-s2", settings, clock, null), "s2", org.apache.pekko.actor.typed.Props.empty());
    List<io.otl.core.session.SessionInput> many = new ArrayList<>();
    for (int i = 0; i < 104; i++) {
      many.add(new io.otl.core.session.SessionInput.Message("e2-" + i, T0.plusSeconds(60 + i),
          i % 2 == 0 ? "user" : "assistant", "turn " + i, null, i % 2 == 0 ? null : 100L + i));
    }
    many.add(new io.otl.core.session.SessionInput.ToolCall("e2-t", T0.plusSeconds(200), null, "crm.lookup", null,
        null, false, null));
    many.add(new io.otl.core.session.SessionInput.Result("e2-res", T0.plusSeconds(201), "FAILURE", null));
    record(s2, AGENT, many);
    // s3 (since v0.2.0): a turn recorded by the inference gateway, and feedback on that response
    ActorRef<AgentSession.Command> s3 = system.systemActorOf(
        AgentSession.create("golden-s3", settings, clock, null), "s3", org.apache.pekko.actor.typed.Props.empty());
    record(s3, AGENT, List.of(
        new io.otl.core.session.SessionInput.Message("e3-m1", T0.plusSeconds(300), "user", "Is my order shipped?",
            "msg-g1", null),
        new io.otl.core.session.SessionInput.Message("e3-m2", T0.plusSeconds(301), "assistant",
            "Yes, it left the warehouse this morning.", "msg-g2", 820L,
            new io.otl.core.session.InferenceCall("v1", "golden-agent-v1", 140L, 42, 11, "stop", false, null, "v2",
                List.of(9642, 11, 433, 2163), List.of(-0.02, -0.31, -0.005, -1.2))),
        new io.otl.core.session.SessionInput.Feedback("e3-f1", T0.plusSeconds(302), "THUMBS_DOWN", null, "fb-g1",
            "user", "msg-g2")));
    // since v0.2.0-guardrails: s3 completes, so its outcome carries the gateway's figures
    record(s3, AGENT, List.of(
        new io.otl.core.session.SessionInput.Result("e3-res", T0.plusSeconds(303), "SUCCESS", null)));
    // since v0.2.0-unconfirmed: a gateway turn whose texts were over max-text-length, stored cut and
    // marked with the optional truncated (field -> length before the cut); the cut texts are short
    // here, the marker is what the fixture pins
    ActorRef<AgentSession.Command> s4 = system.systemActorOf(
        AgentSession.create("golden-s4", settings, clock, null), "s4", org.apache.pekko.actor.typed.Props.empty());
    record(s4, AGENT, List.of(
        new io.otl.core.session.SessionInput.Message("e4-m1", T0.plusSeconds(400), "user",
            "Summarise this build log: [INFO] Scanning for projects", null, null, null, Map.of("content", 70_000)),
        new io.otl.core.session.SessionInput.ToolCall("e4-t1", T0.plusSeconds(401), "call-4", "logs.fetch",
            plain.readTree("{\"job\":\"build-7\"}"), plain.getNodeFactory().textNode("{\"lines\":[\"[INFO] Scanning"),
            true, 230L, Map.of("output", 81_234)),
        new io.otl.core.session.SessionInput.Message("e4-m2", T0.plusSeconds(402), "assistant",
            "The build failed in the test phase.", "msg-g4", 910L,
            new io.otl.core.session.InferenceCall("v1", "golden-agent-v1", 150L, 16_000, 9, "stop", null, null, null,
                null, null), null)));
    // since v0.2.0-messagedetails: an answer another node stored first, from the history of the agent's
    // next call (no msgId, no figures); the answering node's recording then adds them
    record(s4, AGENT, List.of(
        new io.otl.core.session.SessionInput.Message("e4-m3", T0.plusSeconds(403), "user", "Which test?", null, null),
        new io.otl.core.session.SessionInput.Message("e4-m4", T0.plusSeconds(404), "assistant",
            "GatewayClientGoneTest, on a timeout.", null, null)));
    record(s4, AGENT, List.of(
        new io.otl.core.session.SessionInput.Message("e4-m4", T0.plusSeconds(404), "assistant",
            "GatewayClientGoneTest, on a timeout.", "msg-g5", 700L,
            new io.otl.core.session.InferenceCall("v1", "golden-agent-v1", 120L, 16_100, 8, "stop", null, null, null,
                null, null), null)));
    // since v0.2.0-toolresults: the gateway stores a model's tool call with the answer that made it, awaiting
    // its result (awaitingResult), and attaches the result the agent's next request brings (tool-result-recorded)
    record(s4, AGENT, List.of(
        new io.otl.core.session.SessionInput.Message("e4-m5", T0.plusSeconds(405), "assistant", "", "msg-g6", 640L,
            new io.otl.core.session.InferenceCall("v1", "golden-agent-v1", 110L, 16_200, 21, "tool_calls", null, null,
                null, null, null), null),
        new io.otl.core.session.SessionInput.ToolCall("e4-t2", T0.plusSeconds(405), "call-5", "tests.rerun",
            plain.readTree("{\"test\":\"GatewayClientGoneTest\"}"), null, null, null, null, true)));
    record(s4, AGENT, List.of(
        new io.otl.core.session.SessionInput.ToolResult("e4-t2:result", T0.plusSeconds(406), "e4-t2",
            plain.getNodeFactory().textNode("{\"passed\":true,\"log\":\"[INFO] T"), true, 1_200L,
            Map.of("output", 90_000))));
    Map<String, JsonNode> states = new TreeMap<>();
    for (String id : List.of("golden-s1", "golden-s2", "golden-s3", "golden-s4")) {
      states.put(AgentSession.persistenceId(id).id(), render(probe(AgentSession.persistenceId(id),
          AgentSession.State.empty(), AgentSession.State::apply)));
    }
    return states;
  }

  private void record(ActorRef<AgentSession.Command> s, String agentId, List<io.otl.core.session.SessionInput> in)
      throws Exception {
    AgentSession.RecordReply r = ask(s, reply -> new AgentSession.Record(agentId, in, reply));
    assertInstanceOf(AgentSession.Recorded.class, r, () -> "session refused the golden input: " + r);
  }

  // ---------------------------------------------------------------- ModelVersion

  private Map<String, JsonNode> modelVersions(Config base) throws Exception {
    Config mv = ConfigFactory.parseMap(Map.of(
            "agentscope.training.model-update.steps", List.of(0.5, 1.0),
            "agentscope.training.model-update.step-duration", "1m",
            "agentscope.training.model-update.min-samples-per-step", 8))
        .withFallback(base);
    io.otl.core.model.ModelSettings settings =
        io.otl.core.model.ModelSettings.fromConfig(mv.getConfig("agentscope.training"));
    // since v0.2.0-rolloutpolicy: the file's settings as a resolver, so run-time ones can be laid over them
    ActorRef<ModelVersion.Command> m = system.systemActorOf(ModelVersion.create(AGENT,
            io.otl.core.model.RolloutPolicy.over(mv.getConfig("agentscope.training"), null), clock,
            io.otl.core.serving.Serving.registeredEndpoints()), "mv",
        org.apache.pekko.actor.typed.Props.empty());
    // sorted maps: Map.of iterates in another order on every run, and the fixtures must not
    Map<String, Double> good =
        new TreeMap<>(Map.of("task-success-rate", 0.82, "user-satisfaction", 0.7, "response-latency", 900.0));
    Map<String, Double> bad =
        new TreeMap<>(Map.of("task-success-rate", 0.4, "user-satisfaction", 0.3, "response-latency", 3000.0));
    transition(m, r -> new ModelVersion.RegisterCandidate("v1", "file:///ckpt/v1", "http://llm-v1:8000/v1", "job-1-"
        + AGENT, good, r));
    clock.advance(Duration.ofMinutes(1));
    // since v0.2.0-rolloutpolicy: run-time rollout settings before v2's rollout (so the RollingOut
    // snapshot holds them), cleared after v8 below
    Map<String, Object> rollout = new TreeMap<>(Map.of(
        "model-update.canary-ratio", 0.1, "model-update.offline-gate-tolerance", 0.05));
    rolloutPolicy(m, rollout);
    transition(m, r -> new ModelVersion.RegisterCandidate("v2", "file:///ckpt/v2", "http://llm-v2:8000/v1", "job-2-"
        + AGENT, new TreeMap<>(Map.of("task-success-rate", 0.85, "user-satisfaction", 0.72, "response-latency", 850.0)),
        r));
    // since v0.2.0-actor: the operator commands name who asked (actor, left out of the JSON when null)
    transition(m, r -> new ModelVersion.Pause("v2", "http:golden-carol", r));
    clock.advance(Duration.ofSeconds(30));
    transition(m, r -> new ModelVersion.Resume("v2", "http:golden-carol", r));
    for (int i = 0; i < 8; i++) {
      for (String v : List.of("v1", "v2")) {
        String session = "sess-" + v + "-" + i;
        outcome(m, r -> new ModelVersion.RecordOutcome(session, v, true, 4.0, 1, 0, 700.0, r));
      }
    }
    clock.advance(Duration.ofMinutes(2));
    m.tell(ModelVersion.StepTick.INSTANCE);
    transition(m, r -> new ModelVersion.Promote("v2", "http:golden-bob", r));
    clock.advance(Duration.ofMinutes(1));
    transition(m, r -> new ModelVersion.RegisterCandidate("v3", "file:///ckpt/v3", "http://llm-v3:8000/v1", "job-3-"
        + AGENT, bad, r));
    // since v0.2.0-optionalfields: a hand version naming the model its server serves (servedModel,
    // left out of the JSON when null, so no earlier journal holds it)
    transition(m, r -> new ModelVersion.RegisterManual("v4", "file:///ckpt/v4", "http://llm-v4:8000/v1",
        "golden-served-v4", "http:golden-alice", r));
    transition(m, r -> new ModelVersion.Promote("v4", "http", r));
    for (int i = 0; i < 80; i++) {
      String session = "bulk-" + i;
      String v = i % 2 == 0 ? "v4" : "v2";
      Boolean success = i % 3 == 0 ? null : Boolean.TRUE;
      Double rating = i % 4 == 0 ? null : 3.0 + (i % 3);
      int thumbs = i % 5 == 0 ? 1 : 0;
      Double latency = i % 7 == 0 ? null : 500.0 + i;
      outcome(m, r -> new ModelVersion.RecordOutcome(session, v, success, rating, thumbs, 0, latency, r));
    }
    transition(m, r -> new ModelVersion.Rollback("v4", "operator: latency regression in region eu", "http:golden-bob", r));
    clock.advance(Duration.ofMinutes(1));
    transition(m, r -> new ModelVersion.Rollback("v2", "operator: restore v1", r));
    // since v0.2.0-policy: one rollout at a time; v5 canaries, v6 waits READY and v7 supersedes it
    clock.advance(Duration.ofMinutes(1));
    for (String v : List.of("v5", "v6", "v7")) {
      transition(m, r -> new ModelVersion.RegisterCandidate(v, "file:///ckpt/" + v, "http://llm-" + v + ":8000/v1",
          "job-" + v.substring(1) + "-" + AGENT, good, r));
      clock.advance(Duration.ofSeconds(10));
    }
    // since v0.2.0-guardrails: outcomes carrying the inference gateway's figures (model calls,
    // upstream errors, tokens) during v5's canary, and one without them
    for (int i = 0; i < 4; i++) {
      String session = "guard-" + i;
      String v = i == 3 ? "v5" : "v1";
      Integer calls = i == 2 ? null : 3 + i;
      Integer errors = i == 2 ? null : i % 2;
      Long tokens = i == 2 ? null : 1200L + 100L * i;
      outcome(m, r -> new ModelVersion.RecordOutcome(session, v, true, null, 0, 0, 600.0, r, calls, errors, tokens));
    }
    // since v0.2.0-laterating: a rating sent after guard-3's result reaches v5's satisfaction
    outcome(m, r -> new ModelVersion.RecordOutcome("guard-3", "v5", true, 5.0, 0, 0, 600.0, r, null, null, null, true));
    // since v0.2.0-sessionstart: outcomes carry the session's start; one that started before the step
    // (carried over at an earlier ratio) is counted apart for the sample-ratio check
    Instant stepStart = clock.instant();
    outcome(m, r -> new ModelVersion.RecordOutcome("start-old", "v1", true, null, 0, 0, 650.0, r, null, null, null,
        null, null, stepStart.minus(Duration.ofDays(1))));
    outcome(m, r -> new ModelVersion.RecordOutcome("start-new", "v5", true, null, 0, 0, 650.0, r, null, null, null,
        null, null, stepStart));
    // since v0.2.0-continual: a job's candidate without evaluation evidence waits in NO_EVIDENCE
    transition(m, r -> new ModelVersion.RegisterCandidate("v8", "file:///ckpt/v8", "http://llm-v8:8000/v1",
        "job-8-" + AGENT, new TreeMap<>(), r));
    clock.advance(Duration.ofSeconds(10));
    rolloutPolicy(m, Map.of());
    PersistenceId driven = PersistenceId.of(ModelVersion.ENTITY_TYPE_KEY.name(), AGENT);
    // The driven journal's events again, under a second id, with a snapshot of each state class
    List<ModelVersion.Event> events = GoldenNode.events(system, driven.id(), ModelVersion.Event.class);
    Set<Long> snapshotAt = new java.util.TreeSet<>();
    ModelVersion.State s = ModelVersion.initialState();
    boolean idle = false;
    boolean rolling = false;
    for (int i = 0; i < events.size(); i++) {
      s = ModelVersion.applyEvent(s, events.get(i));
      if (!idle && s instanceof ModelVersion.Idle && i > 2) {
        snapshotAt.add(i + 1L);
        idle = true;
      } else if (!rolling && s instanceof ModelVersion.RollingOut) {
        snapshotAt.add(i + 1L);
        rolling = true;
      }
    }
    PersistenceId copy = PersistenceId.of(ModelVersion.ENTITY_TYPE_KEY.name(), AGENT + "-snapshots");
    write(copy, ModelVersion.initialState(), ModelVersion::applyEvent, snapshotAt, ModelVersion::tagsOf, events);
    Map<String, JsonNode> states = new TreeMap<>();
    // since v0.2.0: deployment through a serving backend that calls a server (GoldenDeployments)
    PersistenceId deployed = PersistenceId.ofUniqueId(new GoldenDeployments(system, clock).run(settings));
    for (PersistenceId id : List.of(driven, copy, deployed)) {
      states.put(id.id(), render(probe(id, ModelVersion.initialState(), ModelVersion::applyEvent)));
    }
    return states;
  }

  private void transition(ActorRef<ModelVersion.Command> m,
      Function<ActorRef<ModelVersion.TransitionReply>, ModelVersion.Command> cmd) throws Exception {
    ModelVersion.TransitionReply r = ask(m, cmd);
    assertInstanceOf(ModelVersion.VersionStatus.class, r, () -> "model version refused: " + r);
  }

  private void rolloutPolicy(ActorRef<ModelVersion.Command> m, Map<String, Object> overrides) throws Exception {
    ModelVersion.RolloutPolicyReply r = ask(m, reply -> new ModelVersion.SetRolloutPolicy(overrides, "http", reply));
    assertInstanceOf(ModelVersion.RolloutPolicyView.class, r, () -> "model version refused rollout settings: " + r);
  }

  private void outcome(ActorRef<ModelVersion.Command> m,
      Function<ActorRef<ModelVersion.OutcomeReply>, ModelVersion.Command> cmd) throws Exception {
    ModelVersion.OutcomeReply r = ask(m, cmd);
    assertInstanceOf(ModelVersion.OutcomeAck.class, r, () -> "model version refused an outcome: " + r);
  }

  // ---------------------------------------------------------------- TrainingCoordinator

  private Map<String, JsonNode> coordinator() throws Exception {
    PersistenceId driven = TrainingCoordinator.persistenceId(AGENT + "-driven");
    GoldenCoordinatorRun.run(system, driven.entityId(), clock);
    List<TrainingCoordinator.Event> events = GoldenCoordinatorEvents.all(AGENT, T0);
    PersistenceId plain = TrainingCoordinator.persistenceId(AGENT);
    PersistenceId snap = TrainingCoordinator.persistenceId(AGENT + "-snapshots");
    write(plain, TrainingCoordinator.State.EMPTY, TrainingCoordinator::applyEvent, Set.of(),
        TrainingCoordinator::tagsOf, events);
    write(snap, TrainingCoordinator.State.EMPTY, TrainingCoordinator::applyEvent,
        // the middle, and the end: since v0.2.0-forget a snapshot holds forgottenBefore and write times
        Set.of((long) events.size() / 2, (long) events.size()), TrainingCoordinator::tagsOf, events);
    Map<String, JsonNode> states = new TreeMap<>();
    for (PersistenceId id : List.of(driven, plain, snap)) {
      states.put(id.id(), render(probe(id, TrainingCoordinator.State.EMPTY, TrainingCoordinator::applyEvent)));
    }
    return states;
  }

  // ---------------------------------------------------------------- the offset stores

  private Map<String, JsonNode> kafkaOffsets() throws Exception {
    ActorRef<KafkaPublisherOffset.Command> k = system.systemActorOf(KafkaPublisherOffset.create("golden-topic"),
        "kafka-offset", org.apache.pekko.actor.typed.Props.empty());
    for (int i = 1; i <= 105; i++) {
      long offset = i * 3L;
      this.<KafkaPublisherOffset.Command, org.apache.pekko.Done>ask(k, r -> new KafkaPublisherOffset.Store(offset, r));
    }
    KafkaPublisherOffset.Current current = ask(k, KafkaPublisherOffset.Get::new);
    ObjectNode state = JsonNodeFactory.instance.objectNode().put("offset", current.offset());
    return Map.of(KafkaPublisherOffset.persistenceId("golden-topic").id(), state);
  }

  private Map<String, JsonNode> feedOffsets() throws Exception {
    ActorRef<FeedOffsetStore.Command> f = system.systemActorOf(
        FeedOffsetStore.create("golden-feed", Duration.ofMinutes(5)), "feed-offset",
        org.apache.pekko.actor.typed.Props.empty());
    for (int i = 1; i <= 130; i++) {
      long ordering = i * 10L;
      Instant at = T0.plusSeconds(7L * i);
      this.<FeedOffsetStore.Command, org.apache.pekko.Done>ask(f, r -> new FeedOffsetStore.Advance(ordering, at, r));
    }
    return Map.of(FeedOffsetStore.persistenceId("golden-feed").id(), render(ask(f, FeedOffsetStore.Get::new)));
  }

  // ---------------------------------------------------------------- helpers

  private <E, S> void write(PersistenceId id, S empty, java.util.function.BiFunction<S, E, S> handler,
      Set<Long> snapshotAt, java.util.function.Function<E, Set<String>> tags, List<? extends E> events)
      throws Exception {
    ActorRef<GoldenWriter.Cmd> w = system.systemActorOf(
        GoldenWriter.create(id, empty, handler, snapshotAt, tags), "writer-" + id.id().replace('|', '-'),
        org.apache.pekko.actor.typed.Props.empty());
    for (E e : events) {
      // one event per write, so that every sequence number may carry a snapshot
      this.<GoldenWriter.Cmd, org.apache.pekko.Done>ask(w, r -> new GoldenWriter.Write(List.of(e), r));
    }
  }

  private <E, S> S probe(PersistenceId id, S empty, java.util.function.BiFunction<S, E, S> handler)
      throws Exception {
    return GoldenNode.recover(system, id, empty, handler);
  }

  private JsonNode render(Object state) {
    return GoldenNode.render(system, state);
  }

  private <Q, R> R ask(ActorRef<Q> to, Function<ActorRef<R>, Q> cmd) throws Exception {
    return AskPattern.ask(to, cmd, Duration.ofSeconds(20), system.scheduler())
        .toCompletableFuture().get(30, TimeUnit.SECONDS);
  }
}
