package io.otl.http.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A token limit beyond a 64-bit integer is refused like any other that is not a positive integer. Trial t147's
 * mutation run sent {@code "max_tokens":-9223372036854775809}: read as a long it wrapped to Long.MAX_VALUE, passed
 * the check and was forwarded to the model server, while -1 was a 400.
 */
class ChatRequestTokenLimitTest {

  private static ChatRequest parse(String field, String value) {
    String body = "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"" + field + "\":" + value + "}";
    return ChatRequest.parse(body.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void aNegativeLimitBeyondALongIsRefusedNamingTheField() {
    for (String field : new String[] {"max_tokens", "max_completion_tokens"}) {
      for (String value : new String[] {"-9223372036854775809", "-18446744073709551615", "-1", "0"}) {
        OpenAiError e = assertThrows(OpenAiError.class, () -> parse(field, value), field + "=" + value);
        assertEquals(400, e.status());
        assertEquals(field + " must be a positive integer", e.getMessage(), field + "=" + value);
      }
    }
  }

  @Test
  void aPositiveLimitWithinALongStillPasses() {
    assertEquals(16, parse("max_tokens", "16").body().get("max_tokens").asInt());
    assertEquals(2147483648L, parse("max_completion_tokens", "2147483648").body().get("max_completion_tokens").asLong());
  }
}
