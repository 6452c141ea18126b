package io.otl.core.session;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.session.AgentSession.Event;
import io.otl.core.session.AgentSession.MessageDetailsAdded;
import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.AgentSession.ToolCallRecorded;
import io.otl.core.session.AgentSession.ToolResultRecorded;
import io.otl.core.session.SessionModel.Role;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

/**
 * One turn written by two doors of the node into one session. An agent whose model's base URL is the
 * node's gateway and whose AgentScope hook or OpenTelemetry spans name the same session (the same
 * {@code X-Session-Id}) has each turn reach the node twice, under ids of each door's own, and the session
 * stored every user message, answer and tool call twice (trials t41, t48). What one door sends that
 * another door already stored is a duplicate: decided here, without the actor, on the desensitized event.
 */
final class DoorEchoes {
  private static final ObjectMapper JSON = new ObjectMapper();

  private DoorEchoes() {}

  /**
   * The door that wrote an event id: the AgentScope hook ({@code as-…}), the inference gateway
   * ({@code gw:…}) or the OpenTelemetry door ({@code otlp:…}), else null (the events API, clients' own ids).
   */
  static String door(String eventId) {
    if (eventId.startsWith("as-")) return "as";
    if (eventId.startsWith("gw:")) return "gw";
    if (eventId.startsWith("otlp:")) return "otlp";
    return null;
  }

  /**
   * Whether the session holds a message or tool call another door wrote: a session only one door
   * writes (every gateway session, every hook or OpenTelemetry session) is not searched for echoes, and
   * its inputs are not desensitized a second time for the comparison.
   */
  static boolean holdsOtherDoor(State draft, String door) {
    for (MessageRecorded m : draft.messages()) {
      if (isOther(m.eventId(), door)) return true;
    }
    for (ToolCallRecorded t : draft.toolCalls()) {
      if (isOther(t.eventId(), door)) return true;
    }
    return false;
  }

  /** {@code copy}'s result as the result of {@code stored}, under the id the gateway would give it. */
  private static ToolResultRecorded resultOf(ToolCallRecorded stored, ToolCallRecorded copy, Instant now) {
    Integer cut = copy.truncated() == null ? null : copy.truncated().get("output");
    return new ToolResultRecorded(ToolResultRecorded.eventIdOf(stored.eventId()), copy.at(), now, stored.eventId(),
        copy.output(), copy.success(), copy.latencyMs(), cut == null ? null : java.util.Map.of("output", cut));
  }

  private static boolean isOther(String eventId, String door) {
    String d = door(eventId);
    return d != null && !d.equals(door);
  }

  /**
   * What {@code sent} (a message or tool call of {@code door}, as it would be stored) adds to the session,
   * or null when it is no echo. An echo is: a tool call whose callId and tool another door stored; an answer
   * whose msgId and text another door stored (the gateway's figures, served version, tokens, first-token
   * time, are added to the other door's record as details when it lacks them: the list holds them); a tool
   * message (the OpenTelemetry door's copy of a result the next model call is sent) whose text another door
   * stored as a tool call's output (the gateway and the hook store a result only so); a message of one role
   * and text that other doors stored more often than this one (a user who says "yes" twice is stored twice).
   * Empty: a duplicate with nothing to add.
   */
  static List<Event> echo(State draft, String door, Event sent, Instant now) {
    if (sent instanceof ToolCallRecorded call) {
      if (call.callId() == null) return null;
      for (ToolCallRecorded stored : draft.toolCalls()) {
        if (isOther(stored.eventId(), door) && call.callId().equals(stored.callId())
            && Objects.equals(call.toolName(), stored.toolName())) {
          // The gateway stores a model's call when the model makes it, awaiting its result; another door's copy
          // made after the tool ran carries that result: attached to the stored call, not dropped (review t129:
          // an agent that stopped right after the tool left the call awaiting for good, its output lost).
          return stored.pending() && !call.pending() ? List.of(resultOf(stored, call, now)) : List.of();
        }
      }
      return null;
    }
    MessageRecorded message = (MessageRecorded) sent;
    if (message.role() == Role.assistant && message.msgId() != null) return answerEcho(draft, door, message, now);
    int mine = 0;
    int others = 0;
    for (MessageRecorded stored : draft.messages()) {
      String d = door(stored.eventId());
      if (d == null || stored.role() != message.role() || !Objects.equals(stored.content(), message.content())) {
        continue;
      }
      if (d.equals(door)) mine++;
      else others++;
    }
    if (message.role() == Role.tool) {
      for (ToolCallRecorded stored : draft.toolCalls()) {
        if (isOther(stored.eventId(), door) && isOutput(message.content(), stored.output())) others++;
      }
    }
    return others > mine ? List.of() : null;
  }

  private static List<Event> answerEcho(State draft, String door, MessageRecorded sent, Instant now) {
    for (MessageRecorded stored : draft.messages()) {
      if (isOther(stored.eventId(), door) && stored.role() == Role.assistant
          && sent.msgId().equals(stored.msgId()) && Objects.equals(sent.content(), stored.content())) {
        // The gateway measured the call itself: its figures win; the other door's fill what it lacks.
        // Another door's figures never overwrite the gateway's record.
        if (sent.inference() == null || stored.inference() != null && !"gw".equals(door)) return List.of();
        InferenceCall merged = filled(sent.inference(), stored.inference());
        if (merged.equals(stored.inference())) return List.of();
        return List.of(new MessageDetailsAdded("details:" + stored.eventId(), stored.at(), now, stored.eventId(),
            stored.msgId(), stored.latencyMs() != null ? stored.latencyMs() : sent.latencyMs(), merged));
      }
    }
    return null;
  }

  /** {@code first}, its missing figures taken from {@code second} (null: none). */
  private static InferenceCall filled(InferenceCall first, InferenceCall second) {
    if (second == null) return first;
    return new InferenceCall(or(first.modelVersion(), second.modelVersion()),
        or(first.servedModel(), second.servedModel()), or(first.firstTokenMs(), second.firstTokenMs()),
        or(first.promptTokens(), second.promptTokens()), or(first.completionTokens(), second.completionTokens()),
        or(first.finishReason(), second.finishReason()), or(first.aborted(), second.aborted()),
        or(first.error(), second.error()), or(first.fallbackFrom(), second.fallbackFrom()),
        or(first.tokenIds(), second.tokenIds()), or(first.logprobs(), second.logprobs()));
  }

  private static <T> T or(T a, T b) {
    return a != null ? a : b;
  }

  /**
   * Whether a tool message's text is a stored tool call's output: the text itself (a result that is no
   * JSON) or the same JSON however it is spaced (the gateway stores a JSON result parsed, the spans carry
   * the text the agent sent the model).
   */
  private static boolean isOutput(String content, JsonNode output) {
    if (content == null || output == null || output.isNull()) return false;
    if (output.isTextual()) return content.equals(output.textValue());
    if (content.equals(output.toString())) return true;
    try {
      return output.equals(JSON.readTree(content));
    } catch (java.io.IOException | RuntimeException e) {
      return false;
    }
  }
}
