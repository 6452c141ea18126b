package io.otl.http.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * What a request whose {@code messages} is missing or not an array is told: "messages is required" for
 * {@code "messages":"hi"} sent the client looking for a field it had sent (trial t108).
 */
class ChatRequestMessagesTest {

  private static String problem(String body) {
    OpenAiError e = assertThrows(OpenAiError.class, () -> ChatRequest.parse(body.getBytes(StandardCharsets.UTF_8)));
    assertEquals(400, e.status());
    return e.getMessage();
  }

  @Test
  void messagesMissingIsRequiredAndMessagesOfTheWrongShapeSayWhatWasSent() {
    assertEquals("messages is required: a non-empty array of chat messages", problem("{\"model\":\"m\"}"));
    assertEquals("messages is required: a non-empty array of chat messages",
        problem("{\"model\":\"m\",\"messages\":null}"));
    assertEquals("messages must be a non-empty array of chat messages, not a JSON string",
        problem("{\"model\":\"m\",\"messages\":\"hi\"}"));
    assertEquals("messages must be a non-empty array of chat messages, not a JSON object",
        problem("{\"model\":\"m\",\"messages\":{\"role\":\"user\",\"content\":\"hi\"}}"));
    assertEquals("messages must be a non-empty array of chat messages, not an empty array",
        problem("{\"model\":\"m\",\"messages\":[]}"));
  }

  /**
   * An assistant turn without content whose {@code tool_calls} is malformed is told what is wrong with its
   * calls: it was told "content is required … only an assistant message with tool_calls … may omit it",
   * the tool_calls it had sent (trial-gw, curl with {@code "tool_calls":"x"}).
   */
  @Test
  void anAssistantTurnWithMalformedToolCallsAndNoContentIsToldAboutItsCalls() {
    String calls = "tool_calls must be a non-empty array (leave it out when there are no calls)";
    assertEquals(calls, problem("{\"model\":\"m\",\"messages\":[{\"role\":\"assistant\",\"tool_calls\":\"x\"},"
        + "{\"role\":\"user\",\"content\":\"hi\"}]}"));
    assertEquals(calls, problem("{\"model\":\"m\",\"messages\":[{\"role\":\"assistant\",\"tool_calls\":[]},"
        + "{\"role\":\"user\",\"content\":\"hi\"}]}"));
    assertEquals(calls, problem("{\"model\":\"m\",\"messages\":[{\"role\":\"assistant\",\"content\":null,"
        + "\"tool_calls\":{\"id\":\"c1\"}},{\"role\":\"user\",\"content\":\"hi\"}]}"));
  }

  /** The legacy functions API's call alike, and one without a name (stored as a call of a tool "unknown"). */
  @Test
  void anAssistantTurnWithAMalformedFunctionCallIsToldAboutIt() {
    String call = "function_call must be an object with name and arguments (leave it out when there is no call)";
    assertEquals(call, problem("{\"model\":\"m\",\"messages\":[{\"role\":\"assistant\",\"function_call\":\"x\"},"
        + "{\"role\":\"user\",\"content\":\"hi\"}]}"));
    assertEquals(call, problem("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"q\"},"
        + "{\"role\":\"assistant\",\"function_call\":{\"arguments\":\"{}\"}},"
        + "{\"role\":\"function\",\"name\":\"f\",\"content\":\"r\"},{\"role\":\"user\",\"content\":\"x\"}]}"));
    ChatRequest ok = ChatRequest.parse(("{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"q\"},"
        + "{\"role\":\"assistant\",\"content\":null,\"function_call\":{\"name\":\"f\",\"arguments\":\"{}\"}},"
        + "{\"role\":\"function\",\"name\":\"f\",\"content\":\"r\"}]}").getBytes(StandardCharsets.UTF_8));
    assertEquals(3, ok.messages().size());
  }
}
