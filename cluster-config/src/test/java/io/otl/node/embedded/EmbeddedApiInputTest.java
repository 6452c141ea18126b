package io.otl.node.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.api.DataCollector;
import io.otl.core.api.ModelRouter;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The embedded API as docs/api.md describes it (design §7.3): a refused input fails the stage at
 * once with an exception naming the field, never with an ask timeout.
 */
class EmbeddedApiInputTest {
  /**
   * The stage's failure. Not timed (speed belongs to benchmarks): each caller asserts the refusal's
   * own exception type, which an ask timeout never is.
   */
  private static Throwable failure(Supplier<CompletionStage<?>> call) throws Exception {
    try {
      call.get().toCompletableFuture().get(20, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      return e.getCause();
    }
    throw new AssertionError("accepted");
  }

  @Test
  void aMissingIdFailsTheStageAtOnceNamingTheField(@TempDir Path dir) throws Exception {
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir), false))) {
      DataCollector dc = node.dataCollector();
      ModelRouter router = node.modelRouter();
      SessionInput.Message hi = new SessionInput.Message("e1", null, "user", "hi", null, null);

      for (String sessionId : new String[] {null, ""}) {
        Throwable t = failure(() -> dc.record(sessionId, "agent-a", hi));
        DataCollector.RecordRejectedException r = assertInstanceOf(DataCollector.RecordRejectedException.class, t);
        assertEquals("sessionId", r.rejection().field(), r.getMessage());
        t = failure(() -> dc.feedback(sessionId, "agent-a", "RATING", 5.0, "fb-1"));
        assertEquals("sessionId",
            assertInstanceOf(DataCollector.RecordRejectedException.class, t).rejection().field());
      }
      Throwable role = failure(() -> dc.record("s-1", "agent-a",
          new SessionInput.Message("e1", null, "robot", "hi", null, null)));
      assertEquals("events[0].role",
          assertInstanceOf(DataCollector.RecordRejectedException.class, role).rejection().field());
      // The field once: it read "events[0].role: events[0].role is not one of the allowed: …".
      assertEquals("events[0].role is not one of the allowed: system, user, assistant, tool", role.getMessage());
      // A null event threw a bare NullPointerException at the caller instead of failing the stage.
      Throwable nullEvent = failure(() -> dc.record("s-3", "agent-a", hi, null));
      assertEquals("events[1]",
          assertInstanceOf(DataCollector.RecordRejectedException.class, nullEvent).rejection().field());
      assertEquals("events[1] is null", nullEvent.getMessage());
      Throwable noEvents = failure(() -> dc.record("s-3", "agent-a", (SessionInput[]) null));
      assertEquals("events", assertInstanceOf(DataCollector.RecordRejectedException.class, noEvents).rejection().field());
      dc.record("s-2", "agent-a", hi).toCompletableFuture().get(10, java.util.concurrent.TimeUnit.SECONDS);
      Throwable otherAgent = failure(() -> dc.record("s-2", "agent-b", hi));
      assertEquals("agentId: session s-2 belongs to agent agent-a, not agent-b", otherAgent.getMessage());

      for (String agentId : new String[] {null, ""}) {
        Throwable t = failure(() -> router.route(agentId, "s-1"));
        assertTrue(assertInstanceOf(ModelRouter.InvalidRouteException.class, t).getMessage().startsWith("agentId"),
            t.getMessage());
      }
      Throwable noSession = failure(() -> router.route("agent-a", null));
      assertTrue(assertInstanceOf(ModelRouter.InvalidRouteException.class, noSession).getMessage()
          .startsWith("sessionId"), noSession.getMessage());
    }
  }

  /**
   * Reading a trajectory with a null or empty id (a request that carried none) waited out the ask
   * timeout for an AskTimeoutException, which docs/api.md says may be retried: a retry loop that
   * could never succeed. It now fails with an error naming sessionId.
   */
  @Test
  void aReadWithoutASessionIdFailsNamingTheField(@TempDir Path dir) throws Exception {
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir), false))) {
      DataCollector dc = node.dataCollector();
      for (String sessionId : new String[] {null, ""}) {
        for (Supplier<CompletionStage<?>> read : java.util.List.<Supplier<CompletionStage<?>>>of(
            () -> dc.trajectory(sessionId), () -> dc.lookup(sessionId))) {
          ExecutionException e = assertThrows(ExecutionException.class,
              () -> read.get().toCompletableFuture().get(20, TimeUnit.SECONDS));
          Throwable t = assertInstanceOf(DataCollector.InvalidSessionIdException.class, e.getCause());
          assertTrue(t.getMessage().startsWith("sessionId is required"), t.getMessage());
        }
      }
      assertTrue(dc.trajectory("never-recorded").toCompletableFuture().get(20, TimeUnit.SECONDS).isEmpty());
    }
  }
  /**
   * An id no agent or session can have ("bad agent!", too long, an e-mail address) was routed: the
   * agent's entity started under it and registered v0 in the journal, where the route read and the
   * gateway answer 400 and store nothing. Now it fails naming the field, and nothing is stored.
   */
  @Test
  void anInvalidIdIsRefusedByTheRouterAndTheReadStoringNothing(@TempDir Path dir) throws Exception {
    // A base model, so that a route registers v0 (as on the embedded default, with the simulator).
    com.typesafe.config.Config baseModel = com.typesafe.config.ConfigFactory.parseMap(java.util.Map.of(
        "agentscope.model.base-url", "http://127.0.0.1:9/v1", "agentscope.model.model-name", "base-7b"));
    try (TrainingNode node = TrainingNode.start(baseModel.withFallback(
        TestDatabases.node(TestDatabases.h2(dir), false)))) {
      ModelRouter router = node.modelRouter();
      for (String agentId : new String[] {"bad agent!", "a".repeat(65), "bob@example.com"}) {
        Throwable t = failure(() -> router.route(agentId, "s-1"));
        assertTrue(assertInstanceOf(ModelRouter.InvalidRouteException.class, t).getMessage().startsWith("agentId "),
            t.getMessage());
        assertTrue(!t.getMessage().contains("bob@"), t.getMessage());
      }
      // A new agent's v0 was registered before its entity refused the missing session.
      for (String sessionId : new String[] {null, "bad id!", "s".repeat(129)}) {
        Throwable t = failure(() -> router.route("agent-new", sessionId));
        assertTrue(assertInstanceOf(ModelRouter.InvalidRouteException.class, t).getMessage().startsWith("sessionId "),
            t.getMessage());
      }
      assertEquals(0, modelVersionEvents(node));
      assertEquals("v0", router.route("agent-new", "s-1").toCompletableFuture().get(20, TimeUnit.SECONDS).version());
      assertTrue(modelVersionEvents(node) > 0, "the count reads the journal");

      DataCollector dc = node.dataCollector();
      for (String sessionId : new String[] {"bad id!", "s".repeat(129)}) {
        Throwable t = failure(() -> dc.trajectory(sessionId));
        assertTrue(assertInstanceOf(DataCollector.InvalidSessionIdException.class, t).getMessage()
            .startsWith("sessionId "), t.getMessage());
      }
    }
  }

  /**
   * What every wire door refuses while parsing (docs/http-edge.md, "Strict JSON") the embedding API
   * stored (trial t49): a NUL or lone surrogate in a text (GET /v1/sessions then answered invalid JSON),
   * an {@code at} of year 10000, 1969 or {@code Instant.MAX}, a NaN tool input (read back as the string
   * "NaN"), a metadata value null. Each is now refused naming the field, and nothing is stored; what
   * the wire doors take (an emoji, the last instant of 9999) still is.
   */
  @Test
  void whatTheWireDoorsRefuseIsRefusedHereTooStoringNothing(@TempDir Path dir) throws Exception {
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir), false))) {
      DataCollector dc = node.dataCollector();
      var json = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance;
      java.util.Map<String, String> nullValue = new java.util.HashMap<>();
      nullValue.put("k", null);
      com.fasterxml.jackson.databind.node.ObjectNode deep = json.objectNode();
      com.fasterxml.jackson.databind.node.ObjectNode level = deep;
      for (int i = 1; i < 32; i++) level = level.putObject("a"); // 32 levels: one past the limit of 31
      java.time.Instant year10000 = java.time.Instant.parse("+10000-01-01T00:00:00Z");
      java.util.Map<String, SessionInput> refused = new java.util.LinkedHashMap<>();
      refused.put("events[0].content", new SessionInput.Message("e1", null, "user", "a\u0000b", null, null));
      refused.put("events[0].content|surrogate", new SessionInput.Message("e1", null, "user", "a\ud800b", null, null));
      refused.put("events[0].at", new SessionInput.Message("e1", year10000, "user", "x", null, null));
      refused.put("events[0].at|max", new SessionInput.Message("e1", java.time.Instant.MAX, "user", "x", null, null));
      refused.put("events[0].at|1969", new SessionInput.Message("e1", java.time.Instant.parse("1969-12-31T23:59:59Z"),
          "user", "x", null, null));
      refused.put("events[0].input", new SessionInput.ToolCall("e1", null, "c1", "calc",
          com.fasterxml.jackson.databind.node.DoubleNode.valueOf(Double.NaN), json.objectNode(), true, 1L));
      refused.put("events[0].output", new SessionInput.ToolCall("e1", null, "c1", "calc", json.objectNode(),
          json.objectNode().put("x\u0000", 1), true, 1L));
      refused.put("events[0].input|deep", new SessionInput.ToolCall("e1", null, "c1", "calc", deep, null, true, 1L));
      refused.put("events[0].metadata value #0", new SessionInput.Start("e1", null, null, null, nullValue));
      refused.put("events[0].thought", new SessionInput.Reasoning("e1", null, 1, "\udc00", null, null));
      refused.put("events[0].detail", new SessionInput.Result("e1", null, "SUCCESS", "done\u0000"));
      // What the gateway attaches (public constructors): stored like the rest, so held to the same rules.
      refused.put("events[0].inference.finishReason", new SessionInput.Message("e1", null, "assistant", "x", "r1", null,
          new io.otl.core.session.InferenceCall("v1", "m", null, null, null, "stop\ud800", null, null, null, null, null)));
      refused.put("events[0].inference.logprobs[1]", new SessionInput.Message("e1", null, "assistant", "x", "r1", null,
          new io.otl.core.session.InferenceCall("v1", "m", null, null, null, "stop", null, null, null, null,
              java.util.Arrays.asList(-0.5, Double.NaN))));
      refused.put("events[0].truncated key #0", new SessionInput.Message("e1", null, "user", "x", null, null, null,
          java.util.Map.of("content\u0000", 9)));
      refused.put("events[0].formerId", new SessionInput.Reasoning("e1", null, 1, "t", null, null, "f\u0000"));
      for (var e : refused.entrySet()) {
        String field = e.getKey().replaceAll("\\|.*", "");
        Throwable t = failure(() -> dc.record("strict-1", "agent-a", e.getValue()));
        DataCollector.RecordRejectedException r = assertInstanceOf(DataCollector.RecordRejectedException.class, t,
            e.getKey() + ": " + t);
        assertEquals(field, r.rejection().field(), e.getKey() + ": " + r.getMessage());
        assertTrue(r.getMessage().startsWith(field), r.getMessage());
      }
      Throwable nan = failure(() -> dc.feedback("strict-1", "agent-a", "THUMBS_UP", Double.NaN, "fb-1"));
      // dc.feedback takes parameters, not a batch: it read "events[0].value must be a finite number".
      assertEquals("value must be a finite number", nan.getMessage());
      // A refused input among valid ones refuses the batch whole, as the session does.
      Throwable second = failure(() -> dc.record("strict-1", "agent-a",
          new SessionInput.Message("ok-1", null, "user", "fine", null, null),
          new SessionInput.Message("e2", null, "assistant", "x\u0000", null, null)));
      assertEquals("events[1].content", ((DataCollector.RecordRejectedException) second).rejection().field());
      assertTrue(dc.trajectory("strict-1").toCompletableFuture().get(20, TimeUnit.SECONDS).isEmpty(),
          "nothing refused is stored");

      dc.record("strict-1", "agent-a",
          new SessionInput.Message("ok-1", java.time.Instant.parse("9999-12-31T23:59:59Z"), "user", "hi \uD83C\uDF0D",
              null, null)).toCompletableFuture().get(20, TimeUnit.SECONDS);
      assertEquals("hi \uD83C\uDF0D", dc.trajectory("strict-1").toCompletableFuture().get(20, TimeUnit.SECONDS)
          .orElseThrow().messages().get(0).content());
    }
  }

  private static long modelVersionEvents(TrainingNode node) throws Exception {
    try (var c = io.otl.persistence.JournalSchema.connect(node.journal()); var st = c.createStatement();
        var rs = st.executeQuery("SELECT COUNT(*) FROM event_journal WHERE persistence_id LIKE 'ModelVersion|%'")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /**
   * {@code dc.feedback(sessionId, agentId, kind, value, feedbackId)} takes parameters, not a batch, yet
   * a refusal named {@code events[0].value} and {@code events[0].kind} (trial t64), fields the caller
   * never wrote. It names the parameter, as HTTP's feedback body does; nothing is stored.
   */
  @Test
  void aRefusedFeedbackNamesTheParameterNotAPlaceInABatch(@TempDir Path dir) throws Exception {
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir), false))) {
      DataCollector dc = node.dataCollector();
      dc.record("fb-s", "agent-a", new SessionInput.Message("u1", null, "user", "hi", null, null))
          .toCompletableFuture().get(20, TimeUnit.SECONDS);

      Throwable outOfRange = failure(() -> dc.feedback("fb-s", "agent-a", "RATING", 9.0, "fb-1"));
      DataCollector.RecordRejectedException r = assertInstanceOf(DataCollector.RecordRejectedException.class, outOfRange);
      assertEquals("value", r.rejection().field());
      assertEquals("value is out of range: a RATING is an integer from 1 to 5", r.getMessage());
      Throwable unknownKind = failure(() -> dc.feedback("fb-s", "agent-a", "THUMBS", 1.0, "fb-2"));
      assertEquals("kind",
          assertInstanceOf(DataCollector.RecordRejectedException.class, unknownKind).rejection().field());
      assertTrue(unknownKind.getMessage().startsWith("kind is not one of the allowed"), unknownKind.getMessage());
      Throwable otherAgent = failure(() -> dc.feedback("fb-s", "agent-b", "RATING", 4.0, "fb-3"));
      assertEquals("agentId: session fb-s belongs to agent agent-a, not agent-b", otherAgent.getMessage());

      assertTrue(dc.trajectory("fb-s").toCompletableFuture().get(20, TimeUnit.SECONDS).orElseThrow()
          .feedback().isEmpty(), "nothing refused is stored");
    }
  }

  /**
   * HTTP's feedback body rates one answer with {@code msgId}; {@code dc.feedback} had no such parameter,
   * so Java callers had to build a batch (trial t100). The overload stores it on the answer, and refuses an
   * msgId of no recorded answer naming {@code msgId}, storing nothing.
   */
  @Test
  void feedbackRatesOneAnswerByItsMsgId(@TempDir Path dir) throws Exception {
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir), false))) {
      DataCollector dc = node.dataCollector();
      dc.record("fb-m", "agent-a", new SessionInput.Message("u1", null, "user", "hi", null, null),
          new SessionInput.Message("a1", null, "assistant", "hello", "cmpl-1", 10L))
          .toCompletableFuture().get(20, TimeUnit.SECONDS);

      Throwable unknown = failure(() -> dc.feedback("fb-m", "agent-a", "THUMBS_DOWN", null, "fb-1", "cmpl-2"));
      DataCollector.RecordRejectedException r = assertInstanceOf(DataCollector.RecordRejectedException.class, unknown);
      assertEquals("msgId", r.rejection().field());
      assertEquals(AgentSession.RejectionCode.NOT_FOUND, r.rejection().code());
      dc.feedback("fb-m", "agent-a", "THUMBS_DOWN", null, "fb-2", "cmpl-1").toCompletableFuture()
          .get(20, TimeUnit.SECONDS);

      var feedback = dc.trajectory("fb-m").toCompletableFuture().get(20, TimeUnit.SECONDS).orElseThrow().feedback();
      assertEquals(1, feedback.size(), "only the one on a recorded answer: " + feedback);
      assertEquals("cmpl-1", feedback.get(0).msgId());
      assertEquals("THUMBS_DOWN", feedback.get(0).kind().name());
    }
  }

}
