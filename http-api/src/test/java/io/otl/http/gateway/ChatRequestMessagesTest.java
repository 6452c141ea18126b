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
}
