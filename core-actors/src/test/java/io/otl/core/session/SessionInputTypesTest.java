package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code type()} is the wire name of design §7.1 (the derived ids hash it and messages name it). */
class SessionInputTypesTest {
  @Test
  void eachInputsTypeIsItsJsonTypeName() {
    List<SessionInput> inputs = List.of(
        new SessionInput.Start(null, null, null, null, null),
        new SessionInput.Message(null, null, null, null, null, null),
        new SessionInput.ToolCall(null, null, null, null, null, null, null, null),
        new SessionInput.Reasoning(null, null, null, null, null, null),
        new SessionInput.Feedback(null, null, null, null, null, null),
        new SessionInput.Result(null, null, null, null),
        new SessionInput.ToolResult(null, null, null, null, null, null, null));
    JsonSubTypes.Type[] declared = SessionInput.class.getAnnotation(JsonSubTypes.class).value();
    assertEquals(declared.length, inputs.size());
    for (JsonSubTypes.Type t : declared) {
      SessionInput input = inputs.stream().filter(t.value()::isInstance).findFirst().orElseThrow();
      assertEquals(t.name(), input.type());
    }
    // tool_result: the inference gateway's only (between nodes); the events API and Kafka do not take it
    assertEquals(List.of("start", "message", "tool_call", "reasoning", "feedback", "result", "tool_result"),
        inputs.stream().map(SessionInput::type).toList());
  }
}
