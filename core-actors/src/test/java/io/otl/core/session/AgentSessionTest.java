package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.otl.core.session.AgentSession.Command;
import io.otl.core.session.AgentSession.Event;
import io.otl.core.session.AgentSession.RecordReply;
import io.otl.core.session.AgentSession.Recorded;
import io.otl.core.session.AgentSession.Rejected;
import io.otl.core.session.AgentSession.RejectionCode;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.SessionModel.FeedbackKind;
import io.otl.core.session.SessionModel.Role;
import io.otl.core.session.SessionModel.Status;
import io.otl.core.session.SessionModel.TaskStatus;
import io.otl.core.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class AgentSessionTest {
  private static ActorTestKit testKit;
  private static final ObjectMapper JSON = new ObjectMapper();
  private final ManualClock clock = new ManualClock(Instant.parse("2026-11-20T02:00:00Z"));

  @BeforeAll
  static void start() {
    testKit = ActorTestKit.create(EventSourcedBehaviorTestKit.config().withFallback(ConfigFactory.load()));
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  static SessionSettings settings(String mode, double rate) {
    return new SessionSettings(mode, rate, true, List.of("phone", "id_card", "email"), List.of("secret-\\d+"),
        1000, Duration.ofMinutes(30), Duration.ofDays(7), Duration.ofMinutes(2),
        SessionSettings.RewardWeights.defaults());
  }

  private EventSourcedBehaviorTestKit<Command, Event, State> kit(String sessionId) {
    return kit(sessionId, settings("full", 1.0));
  }

  private EventSourcedBehaviorTestKit<Command, Event, State> kit(String sessionId, SessionSettings s) {
    return EventSourcedBehaviorTestKit.create(testKit.system(), AgentSession.create(sessionId, s, clock, null));
  }

  private static CommandResultWithReply<Command, Event, State, RecordReply> record(
      EventSourcedBehaviorTestKit<Command, Event, State> kit, String agent, SessionInput... inputs) {
    return kit.runCommand(reply -> new AgentSession.Record(agent, List.of(inputs), reply));
  }

  static SessionInput.Message msg(String id, String role, String content) {
    return new SessionInput.Message(id, null, role, content, null, null);
  }

  private static SessionInput.Feedback fb(String id, String kind, Double value) {
    return new SessionInput.Feedback(id, null, kind, value, id, "web");
  }

  private static SessionInput.Result result(String id, String status) {
    return new SessionInput.Result(id, null, status, "done");
  }

  private static SessionInput.ToolCall tool(String id, boolean success) throws Exception {
    return new SessionInput.ToolCall(id, null, "c-" + id, "search", JSON.readTree("{\"q\":\"weather\"}"),
        JSON.readTree("{\"temp\":21}"), success, 120L);
  }

  @Test
  void accumulatesTrajectoryAndCompletesOnResult() throws Exception {
    var kit = kit("s-complete");
    var r1 = record(kit, "agent-a",
        new SessionInput.Start("e0", null, "1.0", "v1", Map.of("channel", "web")),
        msg("e1", "user", "What's the weather?"),
        tool("e2", true),
        new SessionInput.Reasoning("e3", null, 0, "need weather", "search", "21 degrees"),
        new SessionInput.Message("e4", null, "assistant", "21 degrees", "chatcmpl-1", 800L));
    assertEquals(new Recorded(5, 0, true), r1.reply());
    assertEquals(5, r1.events().size());

    var r2 = record(kit, "agent-a", fb("f1", "THUMBS_UP", null), result("e5", "SUCCESS"));
    assertEquals(new Recorded(2, 0, true), r2.reply());
    assertInstanceOf(AgentSession.TrajectoryCompleted.class, r2.events().get(2));
    State s = r2.state();
    assertEquals(Status.COMPLETED, s.status());
    assertEquals("v1", s.modelVersion());
    assertEquals(1.0, s.reward(), 1e-9); // success 1 + thumbs up 1, clipped to 1
    assertEquals(1.0, s.qualityScore(), 1e-9);
    assertEquals(TaskStatus.SUCCESS, s.result().status());
    var completed = (AgentSession.TrajectoryCompleted) r2.events().get(2);
    assertEquals(800.0, completed.outcome().latencyP95Ms());
    assertEquals(1, completed.outcome().thumbsUp());
    assertEquals(List.of("chatcmpl-1"), completed.msgIds(), "the feed takes the responses' ids from the event");
  }

  @Test
  void ratingAndFailureCombineIntoClippedReward() {
    var kit = kit("s-rating");
    record(kit, "agent-a", msg("m1", "user", "hi"), msg("m2", "assistant", "hello"), fb("r", "RATING", 2.0),
        fb("h", "HUMAN_HANDOFF", null));
    var r = record(kit, "agent-a", result("res", "FAILURE"));
    // failure -1, rating (2-3)/2 = -0.5, handoff -0.5 → -2 clipped to -1
    assertEquals(-1.0, r.state().reward(), 1e-9);
    var kit2 = kit("s-rating-2");
    record(kit2, "agent-a", fb("r", "RATING", 4.0), fb("ad", "ADOPTED", null));
    var r2 = record(kit2, "agent-a", result("res", "TIMEOUT"));
    // timeout -0.5 + rating 0.5 + adopted 0.5 = 0.5
    assertEquals(0.5, r2.state().reward(), 1e-9);
  }

  @Test
  void duplicateEventIdsAreStoredOnce() {
    var kit = kit("s-dup");
    var first = record(kit, "agent-a", msg("e1", "user", "a"), msg("e1", "user", "a"), msg("e2", "user", "b"));
    assertEquals(new Recorded(2, 1, true), first.reply());
    var replay = record(kit, "agent-a", msg("e1", "user", "a"), msg("e2", "user", "b"));
    assertEquals(new Recorded(0, 2, true), replay.reply());
    assertTrue(replay.events().isEmpty());
    assertEquals(2, replay.state().messages().size());
  }

  @Test
  void inputsWithoutIdsAreIdempotentThroughDerivedIds() {
    var kit = kit("s-derived");
    var first = record(kit, "agent-a", msg(null, "user", "same"), fb(null, "THUMBS_UP", null));
    var retry = record(kit, "agent-a", msg(null, "user", "same"), fb(null, "THUMBS_UP", null));
    assertEquals(2, first.reply() instanceof Recorded r ? r.accepted() : -1);
    assertEquals(new Recorded(0, 2, true), retry.reply());
  }

  @Test
  void rejectsInvalidInputAndPersistsNothing() {
    var kit = kit("s-invalid");
    assertRejected(record(kit, "agent-a", msg("e1", "user", "ok"), msg("e2", "robot", "x")), "events[1].role");
    assertRejected(record(kit, "agent-a", fb("f", "RATING", 6.0)), "events[0].value");
    assertRejected(record(kit, "agent-a", fb("f", "RATING", 0.0)), "events[0].value");
    assertRejected(record(kit, "agent-a", fb("f", "LOVE", null)), "events[0].kind");
    assertRejected(record(kit, "agent-a", msg("e1", "user", "x".repeat(1001))), "events[0].content");
    assertRejected(record(kit, "agent-a", result("r", "MAYBE")), "events[0].status");
    assertRejected(record(kit, "bad agent!", msg("e1", "user", "x")), "agentId");
    assertRejected(record(kit, "agent-a"), "events");
    assertEquals(Status.NEW, kit.getState().status());

    var emptyId = kit("");
    assertRejected(record(emptyId, "agent-a", msg("e1", "user", "x")), "sessionId");
  }

  private static void assertRejected(CommandResultWithReply<Command, Event, State, RecordReply> r, String field) {
    Rejected rejected = assertInstanceOf(Rejected.class, r.reply());
    assertEquals(RejectionCode.INVALID, rejected.code());
    assertEquals(field, rejected.field(), rejected.message());
    assertTrue(r.events().isEmpty(), "a rejected request persists nothing");
  }

  @Test
  void aSessionBelongsToOneAgent() {
    var kit = kit("s-agent");
    record(kit, "agent-a", msg("e1", "user", "x"));
    Rejected r = assertInstanceOf(Rejected.class, record(kit, "agent-b", msg("e2", "user", "y")).reply());
    assertEquals(RejectionCode.CONFLICT, r.code());
    assertEquals(1, kit.getState().messages().size());
  }

  @Test
  void desensitizesEveryTextFieldBeforePersisting() throws Exception {
    var kit = kit("s-pii");
    var r = record(kit, "agent-a",
        new SessionInput.Start("s", null, null, "v1", Map.of("contact", "bob@example.com")),
        msg("e1", "user", "call me at 13812345678 or +44 20 7946 0958, id 110101199003077578, mail a.b@corp.cn"),
        new SessionInput.ToolCall("e2", null, "c", "crm", JSON.readTree("{\"phone\":\"+8613912345678\"}"),
            JSON.readTree("{\"owner\":{\"email\":\"x@y.org\"},\"ids\":[\"11010119900307757X\"]}"), true, 5L),
        new SessionInput.Reasoning("e3", null, 0, "user id 110101199003077578", "lookup secret-42", "found"));
    // Serialize exactly as the journal does (Pekko's jackson-json binding) and scan the bytes.
    var serialization = org.apache.pekko.serialization.SerializationExtension.get(testKit.system().classicSystem());
    StringBuilder storedBuilder = new StringBuilder();
    for (Event e : r.events()) {
      storedBuilder.append(new String(serialization.serialize(e).get(), java.nio.charset.StandardCharsets.UTF_8));
    }
    String stored = storedBuilder.toString();
    assertTrue(stored.contains("[PHONE]"), stored);
    for (String pii : List.of("13812345678", "7946", "110101199003077578", "a.b@corp.cn", "13912345678",
        "x@y.org", "11010119900307757X", "bob@example.com", "secret-42")) {
      assertFalse(stored.contains(pii), "journal payload still holds " + pii + ": " + stored);
    }
    State s = r.state();
    assertEquals("call me at [PHONE] or [PHONE], id [ID_CARD], mail [EMAIL]", s.messages().get(0).content());
    assertEquals("lookup [REDACTED]", s.steps().get(0).action());
    assertEquals("[EMAIL]", s.metadata().get("contact"));
  }

  @Test
  void idleSessionCompletesWithTimeout() {
    var kit = kit("s-idle");
    record(kit, "agent-a", msg("e1", "user", "hello?"));
    clock.advance(Duration.ofMinutes(10));
    var early = kit.<Object>runCommand(new AgentSession.IdleCheck());
    assertTrue(early.events().isEmpty(), "not idle long enough yet");
    clock.advance(Duration.ofMinutes(21));
    var late = kit.<Object>runCommand(new AgentSession.IdleCheck());
    assertEquals(2, late.events().size());
    assertEquals(Status.COMPLETED, late.state().status());
    assertEquals(TaskStatus.TIMEOUT, late.state().result().status());
    assertEquals(-0.5, late.state().reward(), 1e-9);
  }

  /**
   * An upstream response id with a phone-like run (chatcmpl-…a14655076913) is a random hex token, stored
   * as sent: feedback names it, and the Trinity proxy is told the id it gave.
   */
  @Test
  void aResponseIdHoldingAPhoneShapedRunIsStoredIntactAndFeedbackFindsIt() {
    var kit = kit("s-msgid-pii");
    String responseId = "chatcmpl-f24c43d2675340728ce1a14655076913";
    record(kit, "agent-a", msg("e1", "user", "q"),
        new SessionInput.Message("e2", null, "assistant", "a", responseId, 10L));
    AgentSession.MessageRecorded stored = kit.getState().messages().stream()
        .filter(m -> m.role() == Role.assistant).findFirst().orElseThrow();
    assertEquals(responseId, stored.msgId());
    var rated = record(kit, "agent-a", new SessionInput.Feedback("f1", null, "THUMBS_DOWN", null, "f1", "web", responseId));
    assertInstanceOf(AgentSession.Recorded.class, rated.reply());
    var fr = assertInstanceOf(AgentSession.FeedbackRecorded.class, rated.events().get(0));
    assertEquals(stored.msgId(), fr.msgId());
    Rejected unknown = assertInstanceOf(Rejected.class, record(kit, "agent-a",
        new SessionInput.Feedback("f2", null, "THUMBS_UP", null, "f2", "web", "chatcmpl-other")).reply());
    assertEquals(RejectionCode.NOT_FOUND, unknown.code());
  }

  @Test
  void lateFeedbackRevisesRewardUntilTheWindowCloses() {
    var kit = kit("s-late");
    record(kit, "agent-a", msg("e1", "user", "q"), msg("e2", "assistant", "a"), result("r", "SUCCESS"));
    assertEquals(1.0, kit.getState().reward(), 1e-9);
    clock.advance(Duration.ofDays(1));
    var revised = record(kit, "agent-a", fb("f1", "THUMBS_DOWN", null));
    assertEquals(2, revised.events().size());
    var rr = assertInstanceOf(AgentSession.RewardRevised.class, revised.events().get(1));
    assertEquals(0.0, rr.reward(), 1e-9);
    assertEquals(List.of(), rr.msgIds(), "no response carried a msgId: an empty list, not null (null: read the journal)");
    assertEquals(0.0, revised.state().reward(), 1e-9);
    Rejected afterMessage = assertInstanceOf(Rejected.class, record(kit, "agent-a", msg("e3", "user", "x")).reply());
    assertEquals(RejectionCode.CONFLICT, afterMessage.code());
    clock.advance(Duration.ofDays(7));
    Rejected closed = assertInstanceOf(Rejected.class, record(kit, "agent-a", fb("f2", "THUMBS_UP", null)).reply());
    assertTrue(closed.message().contains("feedback window"), closed.message());
    assertEquals(0.0, kit.getState().reward(), 1e-9);
  }

  @Test
  void stateSurvivesRestartAfterEveryKindOfEvent() throws Exception {
    var kit = kit("s-restart");
    List<SessionInput> inputs = List.of(
        new SessionInput.Start("e0", null, "1.0", "v2", Map.of("k", "v")),
        msg("e1", "user", "q"),
        tool("e2", false),
        new SessionInput.Reasoning("e3", null, 0, "t", "a", "o"),
        msg("e4", "assistant", "answer"),
        fb("f1", "RATING", 5.0),
        result("e5", "SUCCESS"),
        fb("f2", "THUMBS_DOWN", null));
    for (SessionInput input : inputs) {
      record(kit, "agent-a", input);
      State before = kit.getState();
      kit.restart();
      assertEquals(before, kit.getState(), "after " + input.type());
    }
    State s = kit.getState();
    assertEquals(Status.COMPLETED, s.status());
    assertEquals(2, s.feedback().size());
    assertEquals(Role.assistant, s.messages().get(1).role());
    assertEquals(FeedbackKind.THUMBS_DOWN, s.feedback().get(1).kind());
  }

  @Test
  void samplingKeepsOrDropsWholeSessions() {
    SessionSettings half = settings("sampled", 0.5);
    SessionSampler sampler = half.sampler();
    String dropped = null;
    String kept = null;
    for (int i = 0; dropped == null || kept == null; i++) {
      String id = "session-" + i;
      if (sampler.keep(id)) kept = kept == null ? id : kept;
      else dropped = dropped == null ? id : dropped;
    }
    var droppedKit = kit(dropped, half);
    for (int i = 0; i < 3; i++) {
      var r = record(droppedKit, "agent-a", msg("e" + i, "user", "x"));
      assertEquals(new Recorded(0, 0, false), r.reply());
      assertTrue(r.events().isEmpty());
    }
    var keptKit = kit(kept, half);
    for (int i = 0; i < 3; i++) {
      assertEquals(new Recorded(1, 0, true), record(keptKit, "agent-a", msg("e" + i, "user", "x")).reply());
    }
    assertNull(droppedKit.getState().agentId());
    assertEquals(3, keptKit.getState().messages().size());
  }

  @Test
  void theGatewaysModelCallsGiveTheGuardrailFiguresOfTheOutcome() {
    var kit = kit("s-guardrails");
    InferenceCall ok = new InferenceCall("v2", "m", 300L, 120, 80, "stop", false, null, null, null, null);
    InferenceCall failed = new InferenceCall("v2", "m", null, null, null, null, false, "upstream 503", null, null, null);
    InferenceCall fellBack = new InferenceCall("v1", "m", 400L, 100, 50, "stop", false, null, "v2", null, null);
    var r = record(kit, "agent-a",
        new SessionInput.Start("g0", null, "1.0", "v2", Map.of()),
        msg("g1", "user", "hello"),
        new SessionInput.Message("g2", null, "assistant", "hi", "chatcmpl-1", 300L, ok),
        new SessionInput.Message("g3", null, "assistant", "", "chatcmpl-2", 50L, failed),
        new SessionInput.Message("g4", null, "assistant", "hi again", "chatcmpl-3", 400L, fellBack),
        result("g5", "SUCCESS"));
    var completed = r.events().stream().filter(e -> e instanceof AgentSession.TrajectoryCompleted)
        .map(e -> (AgentSession.TrajectoryCompleted) e).findFirst().orElseThrow();
    assertEquals(3, completed.outcome().modelCalls());
    assertEquals(2, completed.outcome().upstreamErrors(), "an error and a fallback to the stable");
    assertEquals(350L, completed.outcome().tokens());

    // Without the gateway there are no figures (null, left out of the stored JSON).
    var plain = kit("s-no-gateway");
    var r2 = record(plain, "agent-a", new SessionInput.Start("p0", null, "1.0", "v2", Map.of()),
        msg("p1", "user", "hello"), new SessionInput.Message("p2", null, "assistant", "hi", "c-1", 300L),
        result("p3", "SUCCESS"));
    var done = r2.events().stream().filter(e -> e instanceof AgentSession.TrajectoryCompleted)
        .map(e -> (AgentSession.TrajectoryCompleted) e).findFirst().orElseThrow();
    assertNull(done.outcome().modelCalls());
    assertNull(done.outcome().tokens());
  }

  /**
   * The gateway looks a session up and records into it a moment later: an unknown session must not
   * passivate on the lookup (as it does on Get), else the recording starts and recovers it again.
   * It still leaves memory after passivate-after when no recording follows.
   */
  @Test
  void lookupOfUnknownSessionKeepsItForTheRecordingThenPassivates() {
    var shard = testKit.<org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding.ShardCommand>createTestProbe();
    SessionSettings s = settings("full", 1.0);
    SessionSettings shortLived = new SessionSettings(s.collectMode(), s.sampleRate(), s.desensitizeEnabled(),
        s.desensitizePatterns(), s.customPatterns(), s.maxTextLength(), s.idleTimeout(), s.feedbackWindow(),
        Duration.ofSeconds(2), s.weights());
    var looked = EventSourcedBehaviorTestKit.<Command, Event, State>create(testKit.system(),
        AgentSession.create("s-lookup", shortLived, clock, shard.getRef()));
    assertEquals(Status.NEW, looked.<State>runCommand(AgentSession.Lookup::new).reply().status());
    shard.expectNoMessage(Duration.ofMillis(300));
    // No recording followed: it passivates after passivate-after.
    assertInstanceOf(org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding.Passivate.class,
        shard.receiveMessage(Duration.ofSeconds(20)));

    var got = EventSourcedBehaviorTestKit.<Command, Event, State>create(testKit.system(),
        AgentSession.create("s-get", shortLived, clock, shard.getRef()));
    assertEquals(Status.NEW, got.<State>runCommand(AgentSession.Get::new).reply().status());
    assertInstanceOf(org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding.Passivate.class,
        shard.receiveMessage(Duration.ofSeconds(20)));

    var recorded = EventSourcedBehaviorTestKit.<Command, Event, State>create(testKit.system(),
        AgentSession.create("s-lookup-record", shortLived, clock, shard.getRef()));
    recorded.<State>runCommand(AgentSession.Lookup::new);
    assertEquals(new Recorded(1, 0, true), record(recorded, "agent-a", msg("m1", "user", "hi")).reply());
    State after = recorded.<State>runCommand(AgentSession.Lookup::new).reply();
    assertEquals(Status.ACTIVE, after.status());
    assertTrue(after.eventIds().contains("m1"));
  }

  /**
   * A read of an unknown id, a refused first request and a sampled-out session leave memory at once
   * (probing ids must not fill the cluster), not after passivate-after, which is an hour here.
   */
  @Test
  void aSessionThatStoresNothingAsksToLeaveAtOnce() {
    var shard = testKit.<org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding.ShardCommand>createTestProbe();
    SessionSettings full = settings("full", 1.0);
    SessionSettings hour = new SessionSettings("sampled", 0.0, true, full.desensitizePatterns(), full.customPatterns(),
        full.maxTextLength(), full.idleTimeout(), full.feedbackWindow(), Duration.ofHours(1), full.weights());
    var read = EventSourcedBehaviorTestKit.<Command, Event, State>create(testKit.system(),
        AgentSession.create("s-probe-read", hour, clock, shard.getRef()));
    read.<State>runCommand(AgentSession.Get::new);
    assertInstanceOf(org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding.Passivate.class,
        shard.receiveMessage(Duration.ofSeconds(20)));

    var refused = EventSourcedBehaviorTestKit.<Command, Event, State>create(testKit.system(),
        AgentSession.create("s-probe-refused", hour, clock, shard.getRef()));
    // (An agentless request to a session sampling drops is acknowledged as sampled out; an invalid one is refused.)
    assertInstanceOf(Rejected.class, record(refused, null, msg("m1", "alien", "hi")).reply());
    assertInstanceOf(org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding.Passivate.class,
        shard.receiveMessage(Duration.ofSeconds(20)));

    var dropped = EventSourcedBehaviorTestKit.<Command, Event, State>create(testKit.system(),
        AgentSession.create("s-probe-dropped", hour, clock, shard.getRef()));
    assertEquals(new Recorded(0, 0, false), record(dropped, "agent-a", msg("m1", "user", "hi")).reply());
    assertInstanceOf(org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding.Passivate.class,
        shard.receiveMessage(Duration.ofSeconds(20)));
  }
}
