package io.otl.http.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.otl.http.Json;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What makes a non-streamed 200 body no answer (trial t87: an error object was recorded as an empty
 * assistant answer). The description keeps the server's type and code, never its message.
 */
class CompletionErrorBodyTest {
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    "{\"error\":{\"message\":\"m jane@example.com\",\"type\":\"server_error\",\"code\":null}}"
        + "|the model server answered 200 with an error object (type server_error)",
    "{\"object\":\"error\",\"message\":\"m\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}"
        + "|the model server answered 200 with an error object (type BadRequestError, code 400)",
    "{\"error\":\"overloaded, try again\"}|the model server answered 200 with an error",
    "{\"error\":{\"message\":\"no type\"}}|the model server answered 200 with an error object",
    "{\"id\":\"x\",\"object\":\"chat.completion\"}|the model server answered 200 without choices",
    "[1,2]|the model server answered 200 with no completion object",
    "\"text\"|the model server answered 200 with no completion object"
  })
  void aBodyWithoutChoicesIsNoAnswer(String body, String why) throws Exception {
    assertEquals(why, Completion.notAnAnswer(Json.MAPPER.readTree(body)));
  }

  @Test
  void aCompletionIsOneEvenWithNoChoiceOrAnErrorFieldBesideItsChoices() throws Exception {
    assertNull(Completion.notAnAnswer(Json.MAPPER.readTree("{\"id\":\"x\",\"choices\":[]}")));
    assertNull(Completion.notAnAnswer(Json.MAPPER.readTree(
        "{\"id\":\"x\",\"error\":null,\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hi\"}}]}")));
    assertEquals("the model server answered 200 with no completion object", Completion.notAnAnswer(null));
  }
}
