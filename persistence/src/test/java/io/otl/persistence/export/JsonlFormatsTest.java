package io.otl.persistence.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.session.AgentSession;
import io.otl.core.session.InferenceCall;
import io.otl.core.session.SessionModel.Counts;
import io.otl.core.session.SessionModel.FeedbackKind;
import io.otl.core.session.SessionModel.Outcome;
import io.otl.core.session.SessionModel.Role;
import io.otl.core.session.SessionModel.TaskStatus;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonlFormatsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Instant T = Instant.parse("2026-01-01T00:00:00Z");

  private static Trajectory sample() throws Exception {
    return new Trajectory.Builder("s-1")
        .add(new AgentSession.SessionStarted("st", T, T, "agent-a", "1", "v3", Map.of()))
        .add(new AgentSession.MessageRecorded("m0", T, T, Role.system, "You are helpful.", null, null))
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "Weather  in Paris?", null, null))
        .add(new AgentSession.ToolCallRecorded("t1", T, T, "c1", "weather", JSON.readTree("{\"city\":\"Paris\"}"),
            JSON.readTree("{\"temp\":21}"), true, 10L))
        .add(new AgentSession.ToolCallRecorded("t2", T, T, null, "weather",
            JSON.readTree("{\"city\":\"Lyon\",\"days\":2}"), JSON.readTree("\"sunny\""), true, 10L))
        .add(new AgentSession.MessageRecorded("m2", T, T, Role.assistant, "21 degrees.", "chatcmpl-1", 300L))
        .add(new AgentSession.TaskResultRecorded("r", T, T, TaskStatus.SUCCESS, "ok"))
        .add(new AgentSession.TrajectoryCompleted("completed", T, T, "agent-a", "v3", 0.75, 0.9,
            new Counts(3, 2, 0, 0), new Outcome(TaskStatus.SUCCESS, null, 0, 0, 0, 300.0)))
        .build();
  }

  /**
   * A tool message that repeats a call's result just rendered is that result (OpenTelemetry records
   * both); two calls with the same result each take one repeat, and a tool message saying something
   * else stays.
   */
  @Test
  void aToolMessageRepeatingACallsResultIsRenderedOnce() throws Exception {
    Trajectory t = new Trajectory.Builder("s-2")
        .add(new AgentSession.SessionStarted("st", T, T, "agent-a", "1", "v3", Map.of()))
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "Paris and Lyon?", null, null))
        .add(new AgentSession.ToolCallRecorded("t1", T, T, "c1", "weather", JSON.readTree("{\"city\":\"Paris\"}"),
            JSON.readTree("{\"temp\":21}"), true, 10L))
        .add(new AgentSession.ToolCallRecorded("t2", T, T, "c2", "weather", JSON.readTree("{\"city\":\"Lyon\"}"),
            JSON.readTree("{\"temp\":21}"), true, 10L))
        .add(new AgentSession.MessageRecorded("m2", T, T, Role.tool, "{\"temp\": 21}", null, null))
        .add(new AgentSession.MessageRecorded("m3", T, T, Role.tool, "{\"temp\":21}", null, null))
        .add(new AgentSession.MessageRecorded("m4", T, T, Role.tool, "cached", null, null))
        .add(new AgentSession.MessageRecorded("m5", T, T, Role.assistant, "21 in both.", null, null))
        .build();
    JsonNode messages = JSON.readTree(JsonlFormats.sft(t).orElseThrow()).get("messages");
    StringBuilder shape = new StringBuilder();
    for (JsonNode m : messages) shape.append(m.get("role").asText()).append(m.path("tool_call_id").asText("")).append(' ');
    assertEquals("user assistant toolc1 toolc2 tool assistant ", shape.toString(), messages.toString());
    assertEquals("cached", messages.get(4).get("content").asText());
  }

  @Test
  void sftRendersMessagesToolCallsAndToolDefinitions() throws Exception {
    JsonNode line = JSON.readTree(JsonlFormats.sft(sample()).orElseThrow());
    JsonNode messages = line.get("messages");
    assertEquals(6, messages.size());
    assertEquals("system", messages.get(0).get("role").asText());
    assertEquals("Weather  in Paris?", messages.get(1).get("content").asText());
    JsonNode calls = messages.get(2).get("tool_calls");
    assertEquals("assistant", messages.get(2).get("role").asText());
    assertEquals(2, calls.size());
    assertEquals("c1", calls.get(0).get("id").asText());
    assertEquals("call_1", calls.get(1).get("id").asText());
    JsonNode args = calls.get(0).get("function").get("arguments");
    assertTrue(args.isObject(), "arguments are an object, not a JSON string: " + args);
    assertEquals(JSON.readTree("{\"city\":\"Paris\"}"), args);
    assertEquals("tool", messages.get(3).get("role").asText());
    assertEquals("c1", messages.get(3).get("tool_call_id").asText());
    assertEquals("{\"temp\":21}", messages.get(3).get("content").asText());
    assertEquals("sunny", messages.get(4).get("content").asText());
    assertEquals("21 degrees.", messages.get(5).get("content").asText());
    JsonNode tools = line.get("tools");
    assertTrue(tools.isArray(), "tools is a JSON array, not a string: " + tools);
    assertEquals(1, tools.size());
    JsonNode params = tools.get(0).get("function").get("parameters");
    assertEquals("weather", tools.get(0).get("function").get("name").asText());
    assertEquals("string", params.get("properties").get("city").get("type").asText());
    assertEquals("integer", params.get("properties").get("days").get("type").asText());
    // deterministic bytes
    assertEquals(JsonlFormats.sft(sample()).orElseThrow(), JsonlFormats.sft(sample()).orElseThrow());
  }

  @Test
  void gatewayBookkeepingMessagesAreNotTrainingText() throws Exception {
    InferenceCall toolsOnly = new InferenceCall("v1", null, 5L, 10, 3, "tool_calls", null, null, null, null, null);
    InferenceCall failed = new InferenceCall("v1", null, null, null, null, null, null, "unreachable", null, null, null);
    InferenceCall aborted = new InferenceCall("v1", null, 5L, null, null, null, true, null, null, null, null);
    Trajectory t = new Trajectory.Builder("s-gw")
        .add(new AgentSession.SessionStarted("gw:start", T, T, "agent-a", null, "v1", Map.of()))
        .add(new AgentSession.MessageRecorded("gw:m:0", T, T, Role.user, "Weather in Paris?", null, null))
        .add(new AgentSession.MessageRecorded("gw:m:1", T, T, Role.assistant, "", "chatcmpl-1", 9L, toolsOnly))
        .add(new AgentSession.ToolCallRecorded("gw:tc:1", T, T, "call_1", "weather",
            JSON.readTree("{\"city\":\"Paris\"}"), JSON.readTree("\"sunny\""), true, null))
        .add(new AgentSession.MessageRecorded("gw:m:3:failed:1", T, T, Role.assistant, "", null, 9L, failed))
        .add(new AgentSession.MessageRecorded("gw:m:3:partial", T, T, Role.assistant, "It is", "chatcmpl-2", 9L,
            aborted))
        .add(new AgentSession.MessageRecorded("gw:m:3:cut", T, T, Role.assistant, "It is sunny and the forecast",
            "chatcmpl-4", 9L, new InferenceCall("v1", null, 5L, 12, 70_000, "length", null, null, null, null, null),
            Map.of("content", 70_000)))
        .add(new AgentSession.MessageRecorded("gw:m:3", T, T, Role.assistant, "It is sunny.", "chatcmpl-3", 9L,
            new InferenceCall("v1", null, 5L, 12, 4, "stop", null, null, null, null, null)))
        .build();
    JsonNode messages = JSON.readTree(JsonlFormats.sft(t).orElseThrow()).get("messages");
    assertEquals(4, messages.size(), messages.toString());
    assertEquals("weather", messages.get(1).get("tool_calls").get(0).get("function").get("name").asText());
    assertEquals("sunny", messages.get(2).get("content").asText());
    assertEquals("It is sunny.", messages.get(3).get("content").asText());
  }

  /**
   * Review t124: the gateway stores a model's call with its answer (awaiting its result) and attaches the result
   * later; the line shows the call once, with its result, and a call whose result never came (AgentScope's
   * structured output) ends the line as the assistant's call, without a tool message.
   */
  @Test
  void aCallStoredWithItsAnswerHasItsLaterResultAndOneWithoutEndsTheLine() throws Exception {
    InferenceCall toolsOnly = new InferenceCall("v1", null, 5L, 10, 3, "tool_calls", null, null, null, null, null);
    Trajectory t = new Trajectory.Builder("s-awaiting")
        .add(new AgentSession.SessionStarted("gw:start", T, T, "agent-a", null, "v1", Map.of()))
        .add(new AgentSession.MessageRecorded("gw:m:0", T, T, Role.user, "Report on Paris", null, null))
        .add(new AgentSession.MessageRecorded("gw:m:1", T, T, Role.assistant, "", "chatcmpl-1", 9L, toolsOnly))
        .add(new AgentSession.ToolCallRecorded("gw:tc:1", T, T, "call_1", "weather",
            JSON.readTree("{\"city\":\"Paris\"}"), null, true, null, null, true))
        .add(new AgentSession.ToolResultRecorded("gw:tc:1:out", T, T, "gw:tc:1", JSON.readTree("\"sunny\""), true,
            null, null))
        .add(new AgentSession.MessageRecorded("gw:m:2", T, T, Role.assistant, "It is sunny.", "chatcmpl-2", 9L,
            null))
        .add(new AgentSession.MessageRecorded("gw:m:3", T, T, Role.user, "Report it", null, null))
        .add(new AgentSession.MessageRecorded("gw:m:4", T, T, Role.assistant, "", "chatcmpl-3", 9L, toolsOnly))
        .add(new AgentSession.ToolCallRecorded("gw:tc:2", T, T, "call_2", "generate_response",
            JSON.readTree("{\"summary\":\"sunny\"}"), null, true, null, null, true))
        .build();
    JsonNode messages = JSON.readTree(JsonlFormats.sft(t).orElseThrow()).get("messages");
    assertEquals(6, messages.size(), messages.toString());
    assertEquals("weather", messages.get(1).get("tool_calls").get(0).get("function").get("name").asText());
    assertEquals(1, messages.get(1).get("tool_calls").size(), "the call once: " + messages);
    assertEquals("tool", messages.get(2).get("role").asText(), messages.toString());
    assertEquals("sunny", messages.get(2).get("content").asText(), "the result attached later: " + messages);
    JsonNode last = messages.get(5);
    assertEquals(1, last.get("tool_calls").size(), messages.toString());
    assertEquals("assistant", last.get("role").asText(), messages.toString());
    assertEquals("generate_response", last.get("tool_calls").get(0).get("function").get("name").asText());
    assertEquals("sunny", last.get("tool_calls").get(0).get("function").get("arguments").get("summary").asText(),
        "arguments an object: " + last);
  }

  /**
   * Review t129: an answer whose call was lost on its way (the client sent the request again and got another
   * call) leaves that call awaiting before later messages: it is not trained as a call made beside the other.
   */
  @Test
  void aCallAwaitingItsResultBeforeLaterMessagesIsLeftOut() throws Exception {
    InferenceCall toolsOnly = new InferenceCall("v1", null, 5L, 10, 3, "tool_calls", null, null, null, null, null);
    Trajectory t = new Trajectory.Builder("s-lost-call")
        .add(new AgentSession.SessionStarted("gw:start", T, T, "agent-a", null, "v1", Map.of()))
        .add(new AgentSession.MessageRecorded("gw:m:0", T, T, Role.user, "Weather in Paris?", null, null))
        .add(new AgentSession.MessageRecorded("gw:m:1", T, T, Role.assistant, "", "chatcmpl-1", 9L, toolsOnly))
        .add(new AgentSession.ToolCallRecorded("gw:tc:x", T, T, "call_x", "weather",
            JSON.readTree("{\"city\":\"Paris\"}"), null, true, null, null, true))
        .add(new AgentSession.MessageRecorded("gw:m:2", T, T, Role.assistant, "", "chatcmpl-2", 9L, toolsOnly))
        .add(new AgentSession.ToolCallRecorded("gw:tc:y", T, T, "call_y", "weather",
            JSON.readTree("{\"city\":\"Paris\"}"), null, true, null, null, true))
        .add(new AgentSession.ToolResultRecorded("gw:tc:y:out", T, T, "gw:tc:y", JSON.readTree("\"sunny\""), true,
            null, null))
        .add(new AgentSession.MessageRecorded("gw:m:3", T, T, Role.assistant, "It is sunny.", "chatcmpl-3", 9L, null))
        .build();
    JsonNode messages = JSON.readTree(JsonlFormats.sft(t).orElseThrow()).get("messages");
    JsonNode calls = messages.get(1).get("tool_calls");
    assertEquals(1, calls.size(), "only the call that ran: " + messages);
    assertEquals("call_y", calls.get(0).get("id").asText(), messages.toString());
    assertEquals("sunny", messages.get(2).get("content").asText(), messages.toString());
  }

  @Test
  void rlCarriesPromptRewardAndMetadata() throws Exception {
    JsonNode line = JSON.readTree(JsonlFormats.rl(sample()).orElseThrow());
    assertEquals("Weather  in Paris?", line.get("prompt").asText());
    assertEquals(0.75, line.get("reward").asDouble());
    assertEquals("s-1", line.get("metadata").get("sessionId").asText());
    assertEquals("agent-a", line.get("metadata").get("agentId").asText());
    assertEquals("v3", line.get("metadata").get("modelVersion").asText());
    assertEquals(0.9, line.get("metadata").get("qualityScore").asDouble());
    assertEquals("21 degrees.", line.get("reference").asText());
    assertTrue(line.get("metadata").get("taskId").asText().startsWith("prompt:"));
    // trial t106: the rollouts must run under the system prompt the agent ran under
    assertEquals("You are helpful.", line.get("system").asText());
  }

  @Test
  void textBeforeAToolCallAndTwoAnswersInARowAreOneAssistantMessage() throws Exception {
    Trajectory t = new Trajectory.Builder("s-4")
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "Weather?", null, null))
        .add(new AgentSession.MessageRecorded("m2", T, T, Role.assistant, "Let me check.", null, null))
        .add(new AgentSession.ToolCallRecorded("t1", T, T, "c1", "weather", JSON.readTree("[\"Paris\"]"),
            JSON.readTree("\"sunny\""), true, 10L))
        .add(new AgentSession.MessageRecorded("m3", T, T, Role.assistant, "Sunny.", null, null))
        .add(new AgentSession.MessageRecorded("m4", T, T, Role.assistant, "Anything else?", null, null))
        .build();
    JsonNode messages = JSON.readTree(JsonlFormats.sft(t).orElseThrow()).get("messages");
    assertEquals(4, messages.size(), messages.toString());
    assertEquals("Let me check.", messages.get(1).get("content").asText());
    assertEquals("c1", messages.get(1).get("tool_calls").get(0).get("id").asText());
    assertEquals(JSON.readTree("{\"input\":[\"Paris\"]}"),
        messages.get(1).get("tool_calls").get(0).get("function").get("arguments"), "a non-object input is wrapped");
    assertEquals("tool", messages.get(2).get("role").asText());
    assertEquals("Sunny.\nAnything else?", messages.get(3).get("content").asText());
    for (int i = 1; i < messages.size(); i++) {
      assertTrue(!(messages.get(i).get("role").asText().equals("assistant")
          && messages.get(i - 1).get("role").asText().equals("assistant")), "no two assistant messages in a row");
    }
  }

  private static AgentSession.FeedbackRecorded rated(String id, FeedbackKind kind, Double value, String msgId) {
    return new AgentSession.FeedbackRecorded(id, T, T, id, kind, value, "user", msgId);
  }

  /**
   * Trial t8: a user thumbed down one response by msgId and up the next; the session's reward still
   * passed sft-min-reward, and the SFT line (which trains every assistant turn) taught the rejected
   * answer. The line now ends before the first response rated down; with nothing left, no line.
   */
  @Test
  void anSftLineEndsBeforeTheFirstResponseItsUserRatedDown() throws Exception {
    Trajectory t = new Trajectory.Builder("s-rated")
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "Weather in Oslo?", null, null))
        .add(new AgentSession.MessageRecorded("m2", T, T, Role.assistant, "Cold, 3 degrees.", "resp-1", 9L))
        .add(new AgentSession.MessageRecorded("m3", T, T, Role.user, "And tomorrow?", null, null))
        .add(new AgentSession.MessageRecorded("m4", T, T, Role.assistant, "No idea, sorry.", "resp-2", 9L))
        .add(new AgentSession.MessageRecorded("m5", T, T, Role.user, "Try again", null, null))
        .add(new AgentSession.MessageRecorded("m6", T, T, Role.assistant, "Tomorrow 5 degrees.", "resp-3", 9L))
        .add(rated("f1", FeedbackKind.THUMBS_DOWN, null, "resp-2"))
        .add(rated("f2", FeedbackKind.RATING, 5.0, "resp-3"))
        .add(rated("f3", FeedbackKind.THUMBS_UP, null, null))
        .build();
    JsonNode messages = JSON.readTree(JsonlFormats.sft(t).orElseThrow()).get("messages");
    assertEquals(2, messages.size(), messages.toString());
    assertEquals("Cold, 3 degrees.", messages.get(1).get("content").asText());

    Trajectory firstRatedDown = new Trajectory.Builder("s-rated-first")
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "Weather in Oslo?", null, null))
        .add(new AgentSession.MessageRecorded("m2", T, T, Role.assistant, "No idea.", "resp-1", 9L))
        .add(new AgentSession.MessageRecorded("m3", T, T, Role.user, "Try again", null, null))
        .add(new AgentSession.MessageRecorded("m4", T, T, Role.assistant, "Cold, 3 degrees.", "resp-2", 9L))
        .add(rated("f1", FeedbackKind.RATING, 1.0, "resp-1"))
        .add(rated("f2", FeedbackKind.THUMBS_UP, null, "resp-2"))
        .build();
    assertTrue(JsonlFormats.sft(firstRatedDown).isEmpty());
    assertEquals(ExportExclusions.RATED_DOWN_ANSWER, JsonlFormats.sftProblem(firstRatedDown).orElseThrow());
  }

  /**
   * An answer stored first from the next call's history (another node) whose details came later: the
   * per-turn feedback naming it cuts the SFT line there, as when the answering node stored it first.
   */
  @Test
  void anAnswerWhoseMsgIdCameLaterIsWhereItsRatingCutsTheLine() throws Exception {
    InferenceCall call = new InferenceCall("v1", "m1", 5L, 10, 3, "stop", null, null, null, null, null);
    Trajectory t = new Trajectory.Builder("s-details")
        .add(new AgentSession.MessageRecorded("gw:m:0", T, T, Role.user, "Weather in Oslo?", null, null))
        .add(new AgentSession.MessageRecorded("gw:m:1", T, T, Role.assistant, "Cold, 3 degrees.", "chatcmpl-1", 9L))
        .add(new AgentSession.MessageRecorded("gw:m:2", T, T, Role.user, "And tomorrow?", null, null))
        .add(new AgentSession.MessageRecorded("gw:m:3", T, T, Role.assistant, "No idea, sorry.", null, null))
        .add(new AgentSession.MessageRecorded("gw:m:4", T, T, Role.user, "Try again", null, null))
        .add(new AgentSession.MessageDetailsAdded("details:gw:m:3", T, T, "gw:m:3", "chatcmpl-2", 40L, call))
        .add(rated("f1", FeedbackKind.THUMBS_DOWN, null, "chatcmpl-2"))
        .build();
    assertEquals("chatcmpl-2", t.state().messages().get(3).msgId());
    assertEquals(call, ((AgentSession.MessageRecorded) t.conversation().get(3)).inference());
    JsonNode messages = JSON.readTree(JsonlFormats.sft(t).orElseThrow()).get("messages");
    assertEquals(2, messages.size(), messages.toString());
    assertEquals("Cold, 3 degrees.", messages.get(1).get("content").asText());
  }

  /**
   * Trial t27: a session thumbed up on its first answer and down on its last, completed SUCCESS
   * (reward 1.0): the SFT line ended before the rejected answer, but the RL task took that very
   * answer as its {@code reference}, which a GRPO job's reward function scores every rollout
   * against. The reference is the last answer its user did not rate down; none left, null.
   */
  @Test
  void anRlReferenceIsNeverAnAnswerItsUserRatedDown() throws Exception {
    Trajectory t = new Trajectory.Builder("s-rl-rated")
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "Book me a flight", null, null))
        .add(new AgentSession.MessageRecorded("m2", T, T, Role.assistant, "Where to?", "resp-1", 9L))
        .add(new AgentSession.MessageRecorded("m3", T, T, Role.user, "Lisbon", null, null))
        .add(new AgentSession.MessageRecorded("m4", T, T, Role.assistant, "Booked to Oslo.", "resp-2", 9L))
        .add(rated("f1", FeedbackKind.THUMBS_UP, null, "resp-1"))
        .add(rated("f2", FeedbackKind.THUMBS_DOWN, null, "resp-2"))
        .build();
    assertEquals("Where to?", JSON.readTree(JsonlFormats.rl(t).orElseThrow()).get("reference").asText());

    Trajectory onlyRatedDown = new Trajectory.Builder("s-rl-all-rated")
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "Book me a flight", null, null))
        .add(new AgentSession.MessageRecorded("m2", T, T, Role.assistant, "No.", "resp-1", 9L))
        .add(rated("f1", FeedbackKind.RATING, 1.0, "resp-1"))
        .build();
    assertTrue(JSON.readTree(JsonlFormats.rl(onlyRatedDown).orElseThrow()).get("reference").isNull());
  }

  /** A response that is only tool calls (gateway bookkeeping, not rendered) rated down: its calls go too. */
  @Test
  void aRatedDownToolCallResponseTakesItsCallsOutOfTheSftLine() throws Exception {
    InferenceCall toolsOnly = new InferenceCall("v1", null, 5L, 10, 3, "tool_calls", null, null, null, null, null);
    Trajectory t = new Trajectory.Builder("s-gw-rated")
        .add(new AgentSession.MessageRecorded("gw:m:0", T, T, Role.user, "Weather in Paris?", null, null))
        .add(new AgentSession.MessageRecorded("gw:m:1", T, T, Role.assistant, "Paris is mild.", "chatcmpl-1", 9L))
        .add(new AgentSession.MessageRecorded("gw:m:2", T, T, Role.user, "Book me a hotel", null, null))
        .add(new AgentSession.MessageRecorded("gw:m:3", T, T, Role.assistant, "", "chatcmpl-2", 9L, toolsOnly))
        .add(new AgentSession.ToolCallRecorded("gw:tc:1", T, T, "call_1", "delete_account",
            JSON.readTree("{}"), JSON.readTree("\"done\""), true, null))
        .add(new AgentSession.MessageRecorded("gw:m:4", T, T, Role.assistant, "Done.", "chatcmpl-3", 9L))
        .add(rated("f1", FeedbackKind.HUMAN_HANDOFF, null, "chatcmpl-2"))
        .build();
    JsonNode messages = JSON.readTree(JsonlFormats.sft(t).orElseThrow()).get("messages");
    assertEquals(2, messages.size(), messages.toString());
    assertEquals("Paris is mild.", messages.get(1).get("content").asText());
  }

  /** A booking conversation: system, question, clarification, a search with its result, a final turn. */
  private static Trajectory booking(String id, String callId, String lastUser, String lastAnswer) throws Exception {
    return new Trajectory.Builder(id)
        .add(new AgentSession.MessageRecorded("m0", T, T, Role.system, "You are TravelBot.", null, null))
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "I need to book a flight.", null, null))
        .add(new AgentSession.MessageRecorded("m2", T, T, Role.assistant, "Where to, and when?", null, null))
        .add(new AgentSession.MessageRecorded("m3", T, T, Role.user, "Paris, May 3rd.", null, null))
        .add(new AgentSession.ToolCallRecorded("t1", T, T, callId, "search_flights",
            JSON.readTree("{\"to\":\"Paris\"}"), JSON.readTree("{\"flights\":[\"AF123\"]}"), true, 10L))
        .add(new AgentSession.MessageRecorded("m4", T, T, Role.assistant, "AF123 leaves at 9am. Book it?", null, null))
        .add(new AgentSession.MessageRecorded("m5", T, T, Role.user, lastUser, null, null))
        .add(new AgentSession.MessageRecorded("m6", T, T, Role.assistant, lastAnswer, null, null))
        .add(new AgentSession.MessageRecorded("m7", T, T, Role.user, "thanks", null, null))
        .build();
  }

  /**
   * A multi-turn pair: the answers reply to the whole conversation before them, not to the first
   * question. The line was {"prompt":"I need to book a flight.","chosen":"Booked AF123.",…}: the
   * system prompt, the destination and the search were lost, and the model learned to book without
   * asking. Now both sides share the conversation up to where the sessions differ (tool call ids,
   * which each session has of its own, do not count) and each goes on with what it said.
   */
  @Test
  void aMultiTurnDpoPairKeepsTheConversationBeforeTheAnswers() throws Exception {
    Trajectory chosen = booking("good", "call_a", "Yes, book it.", "Booked AF123.");
    Trajectory rejected = booking("bad", "call_b", "Yes, book it.", "Sorry, I cannot book flights.");
    JsonNode line = JSON.readTree(JsonlFormats.dpo(chosen, rejected));
    assertEquals("I need to book a flight.", line.get("prompt").asText(), "design §6's texts stay");
    assertEquals("Booked AF123.", line.get("chosen").asText());
    assertEquals("Sorry, I cannot book flights.", line.get("rejected").asText());
    JsonNode prompt = line.get("messages");
    StringBuilder roles = new StringBuilder();
    for (JsonNode m : prompt) roles.append(m.get("role").asText()).append(' ');
    assertEquals("system user assistant user assistant tool assistant user ", roles.toString(), prompt.toString());
    assertEquals("Yes, book it.", prompt.get(prompt.size() - 1).get("content").asText());
    assertEquals("call_a", prompt.get(4).get("tool_calls").get(0).get("id").asText());
    assertEquals(JSON.readTree("[{\"role\":\"assistant\",\"content\":\"Booked AF123.\"}]"), line.get("chosen_messages"),
        "the closing thanks after the answer is not part of it");
    assertEquals(JSON.readTree("[{\"role\":\"assistant\",\"content\":\"Sorry, I cannot book flights.\"}]"),
        line.get("rejected_messages"));
  }

  /** Sessions that part earlier each keep what followed: the shared part ends before an assistant turn. */
  @Test
  void dpoSidesThatPartAtAUserTurnGoOnFromTheLastSharedAssistantTurn() throws Exception {
    Trajectory chosen = booking("good", "call_a", "Yes, book it.", "Booked AF123.");
    Trajectory rejected = booking("bad", "call_b", "No, later.", "Booked AF123.");
    JsonNode line = JSON.readTree(JsonlFormats.dpo(chosen, rejected));
    assertEquals(6, line.get("messages").size(), line.toString());
    assertEquals("tool", line.get("messages").get(5).get("role").asText());
    JsonNode c = line.get("chosen_messages");
    JsonNode r = line.get("rejected_messages");
    assertEquals(3, c.size(), c.toString());
    assertEquals("AF123 leaves at 9am. Book it?", c.get(0).get("content").asText());
    assertEquals("Yes, book it.", c.get(1).get("content").asText());
    assertEquals("No, later.", r.get(1).get("content").asText());
  }

  /** One-turn sessions give what they gave, with the system prompt now in the shared part. */
  @Test
  void aOneTurnDpoPairIsTheQuestionAndTheTwoAnswers() throws Exception {
    Trajectory a = new Trajectory.Builder("a")
        .add(new AgentSession.MessageRecorded("m0", T, T, Role.system, "Be brief.", null, null))
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "Capital of France?", null, null))
        .add(new AgentSession.MessageRecorded("m2", T, T, Role.assistant, "Paris.", null, null)).build();
    Trajectory b = new Trajectory.Builder("b")
        .add(new AgentSession.MessageRecorded("m0", T, T, Role.system, "Be brief.", null, null))
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "capital of  france?", null, null))
        .add(new AgentSession.MessageRecorded("m2", T, T, Role.assistant, "Lyon.", null, null)).build();
    String line = JsonlFormats.dpo(a, b);
    assertEquals("{\"prompt\":\"Capital of France?\",\"chosen\":\"Paris.\",\"rejected\":\"Lyon.\","
        + "\"messages\":[{\"role\":\"system\",\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":\"Capital of France?\"}],"
        + "\"chosen_messages\":[{\"role\":\"assistant\",\"content\":\"Paris.\"}],"
        + "\"rejected_messages\":[{\"role\":\"assistant\",\"content\":\"Lyon.\"}],\"metadata\":",
        line.substring(0, line.indexOf("\"metadata\":") + "\"metadata\":".length()));
  }

  /**
   * A DPO line names the sessions it compares, as an RL task names its own in {@code metadata}: a pair
   * read from the file alone (a bad pair found in training) could not be traced to its two sessions.
   */
  @Test
  void aDpoLineNamesBothOfItsSessions() throws Exception {
    Trajectory chosen = new Trajectory.Builder("s-good")
        .add(new AgentSession.SessionStarted("st", T, T, "agent-a", "1", "v3", Map.of("taskId", "T-7")))
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "Capital of France?", null, null))
        .add(new AgentSession.MessageRecorded("m2", T, T, Role.assistant, "Paris.", null, null)).build();
    Trajectory rejected = new Trajectory.Builder("s-bad")
        .add(new AgentSession.SessionStarted("st", T, T, "agent-a", "1", "v3", Map.of("taskId", "T-7")))
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "Capital of France?", null, null))
        .add(new AgentSession.MessageRecorded("m2", T, T, Role.assistant, "Lyon.", null, null)).build();
    JsonNode meta = JSON.readTree(JsonlFormats.dpo(chosen, rejected)).get("metadata");
    assertEquals(JSON.readTree("{\"chosenSessionId\":\"s-good\",\"rejectedSessionId\":\"s-bad\","
        + "\"agentId\":\"agent-a\",\"taskId\":\"task:T-7\"}"), meta);
  }

  @Test
  void theTaskIsTheClientsTaskIdElseTheNormalisedPrompt() {
    Trajectory a = new Trajectory.Builder("a")
        .add(new AgentSession.SessionStarted("st", T, T, "agent-a", "1", "v3", Map.of("taskId", "T-7")))
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "one wording", null, null)).build();
    Trajectory b = new Trajectory.Builder("b")
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "  Weather\tin PARIS? ", null, null)).build();
    Trajectory c = new Trajectory.Builder("c")
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "weather in paris?", null, null)).build();
    assertEquals("task:T-7", TaskKey.of(a).orElseThrow());
    assertEquals(TaskKey.of(b), TaskKey.of(c));
  }

  @Test
  void withoutToolsTheToolsFieldIsAnEmptyList() throws Exception {
    Trajectory t = new Trajectory.Builder("s-2")
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "hi", null, null))
        .add(new AgentSession.MessageRecorded("m2", T, T, Role.assistant, "hello", null, null))
        .build();
    assertEquals("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},{\"role\":\"assistant\",\"content\":\"hello\"}],"
        + "\"tools\":[]}", JsonlFormats.sft(t).orElseThrow());
    Trajectory noAnswer = new Trajectory.Builder("s-3")
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "hi", null, null)).build();
    assertTrue(JsonlFormats.sft(noAnswer).isEmpty());
  }

  @Test
  void promptsAreComparedNormalised() {
    assertEquals(JsonlFormats.normalisePrompt("  Weather\tin   PARIS? "), JsonlFormats.normalisePrompt("weather in paris?"));
  }

  @Test
  void algorithmsMapToFormats() {
    assertEquals(ExportFormat.SFT, ExportFormat.forAlgorithm("sft"));
    assertEquals(ExportFormat.RL, ExportFormat.forAlgorithm("distillation"), "on-policy: the prompts only");
    assertEquals(ExportFormat.DPO, ExportFormat.forAlgorithm("dpo"));
    assertEquals(ExportFormat.RL, ExportFormat.forAlgorithm("ppo"));
    assertEquals(ExportFormat.RL, ExportFormat.forAlgorithm("GRPO"));
    assertThrows(IllegalArgumentException.class, () -> ExportFormat.forAlgorithm("rlhf"));
    assertThrows(IllegalArgumentException.class, () -> ExportFormat.parse("csv"));
  }
}
