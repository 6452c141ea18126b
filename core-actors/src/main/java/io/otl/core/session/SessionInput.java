package io.otl.core.session;

import static com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.JsonSerializable;
import java.time.Instant;
import java.util.Map;

/**
 * One thing an agent reports about a session, as received (HTTP body, Kafka record, embedded
 * call): not yet validated, desensitized or deduplicated. {@code eventId} and {@code at} are
 * optional; the session derives the first and takes the server's clock for the second.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({
  @JsonSubTypes.Type(value = SessionInput.Start.class, name = "start"),
  @JsonSubTypes.Type(value = SessionInput.Message.class, name = "message"),
  @JsonSubTypes.Type(value = SessionInput.ToolCall.class, name = "tool_call"),
  @JsonSubTypes.Type(value = SessionInput.Reasoning.class, name = "reasoning"),
  @JsonSubTypes.Type(value = SessionInput.Feedback.class, name = "feedback"),
  @JsonSubTypes.Type(value = SessionInput.Result.class, name = "result"),
  @JsonSubTypes.Type(value = SessionInput.ToolResult.class, name = "tool_result")
})
public sealed interface SessionInput extends JsonSerializable {
  String eventId();

  Instant at();

  /** The wire name of this input's type, as in the HTTP body and on Kafka. */
  String type();

  /**
   * The id earlier builds stored this same input under, when its id is now derived otherwise (null:
   * none): a re-sent copy that finds it is a duplicate. Set by the doors, never read from a client.
   */
  default String formerId() {
    return null;
  }

  record Start(String eventId, Instant at, String agentVersion, String modelVersion, Map<String, String> metadata)
      implements SessionInput {
    public String type() { return "start"; }
  }

  /**
   * @param inference set by the inference gateway only (null from every other door)
   * @param truncated set by the inference gateway only: {@code content} → its length in characters
   *     before the gateway cut it at {@code data-collector.max-text-length} (null: nothing was cut)
   * @param formerId see {@link SessionInput#formerId()}
   */
  record Message(String eventId, Instant at, String role, String content, String msgId, Long latencyMs,
      InferenceCall inference, @JsonInclude(NON_NULL) Map<String, Integer> truncated,
      @JsonInclude(NON_NULL) String formerId)
      implements SessionInput {
    @JsonCreator
    public Message {}

    public Message(String eventId, Instant at, String role, String content, String msgId, Long latencyMs) {
      this(eventId, at, role, content, msgId, latencyMs, null, null, null);
    }

    public Message(String eventId, Instant at, String role, String content, String msgId, Long latencyMs,
        InferenceCall inference) {
      this(eventId, at, role, content, msgId, latencyMs, inference, null, null);
    }

    public Message(String eventId, Instant at, String role, String content, String msgId, Long latencyMs,
        InferenceCall inference, Map<String, Integer> truncated) {
      this(eventId, at, role, content, msgId, latencyMs, inference, truncated, null);
    }

    public String type() { return "message"; }
  }

  /**
   * @param truncated set by the inference gateway only: {@code input} and/or {@code output} → the
   *     length of its JSON text before the gateway cut it at {@code data-collector.max-text-length}
   *     (then the field holds the cut text as a string); null: nothing was cut
   * @param awaitingResult set by the inference gateway only: true for a call the model made whose result has
   *     not come back ({@code output} and {@code success} are then not the tool's); its {@link ToolResult}
   *     attaches the result later. Null (every other door): the call with its result, as sent
   */
  record ToolCall(
      String eventId, Instant at, String callId, String toolName, JsonNode input, JsonNode output,
      Boolean success, Long latencyMs, @JsonInclude(NON_NULL) Map<String, Integer> truncated,
      @JsonInclude(NON_NULL) Boolean awaitingResult)
      implements SessionInput {
    @JsonCreator
    public ToolCall {}

    public ToolCall(String eventId, Instant at, String callId, String toolName, JsonNode input, JsonNode output,
        Boolean success, Long latencyMs, Map<String, Integer> truncated) {
      this(eventId, at, callId, toolName, input, output, success, latencyMs, truncated, null);
    }

    public ToolCall(String eventId, Instant at, String callId, String toolName, JsonNode input, JsonNode output,
        Boolean success, Long latencyMs) {
      this(eventId, at, callId, toolName, input, output, success, latencyMs, null);
    }

    public String type() { return "tool_call"; }
  }

  /** @param formerId see {@link SessionInput#formerId()} */
  record Reasoning(String eventId, Instant at, Integer index, String thought, String action, String observation,
      @JsonInclude(NON_NULL) String formerId)
      implements SessionInput {
    @JsonCreator
    public Reasoning {}

    public Reasoning(String eventId, Instant at, Integer index, String thought, String action, String observation) {
      this(eventId, at, index, thought, action, observation, null);
    }

    public String type() { return "reasoning"; }
  }

  /** @param msgId the response this feedback rates (a recorded assistant message's msgId), or null: the session */
  record Feedback(String eventId, Instant at, String kind, Double value, String feedbackId, String source,
      String msgId)
      implements SessionInput {
    @JsonCreator
    public Feedback {}

    public Feedback(String eventId, Instant at, String kind, Double value, String feedbackId, String source) {
      this(eventId, at, kind, value, feedbackId, source, null);
    }

    public String type() { return "feedback"; }

    /** This feedback with another kind and value: every other component as it is. */
    public Feedback with(String kind, Double value) {
      return new Feedback(eventId, at, kind, value, feedbackId, source, msgId);
    }
  }

  record Result(String eventId, Instant at, String status, String detail) implements SessionInput {
    public String type() { return "result"; }
  }

  /**
   * The result of a tool call the session holds as awaiting it ({@link ToolCall#awaitingResult}), sent by
   * the inference gateway when the agent's next request brings the tool message: it is attached to that
   * call ({@code callEventId}), so the call is stored once, when the model made it, and keeps its result.
   * Not an input of the events API or Kafka (their tool calls carry their output). A result for a call the
   * session does not hold awaiting one (it has its result already, or another door's copy of it) is a
   * duplicate.
   *
   * @param truncated {@code output} → the length of its JSON text before the gateway cut it; null: not cut
   */
  record ToolResult(String eventId, Instant at, String callEventId, JsonNode output, Boolean success,
      Long latencyMs, @JsonInclude(NON_NULL) Map<String, Integer> truncated) implements SessionInput {
    public String type() { return "tool_result"; }
  }
}
