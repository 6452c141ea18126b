package io.otl.http.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.session.Desensitizer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the gateway stores of a text over max-text-length: at most the limit, no split PII, no split character. */
class TextCutTest {
  private static final Desensitizer D = new Desensitizer(true, List.of("phone", "email", "id_card"), List.of());
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aTextWithinTheLimitIsStoredAsSentUnmarked() {
    TextCut.Text t = new TextCut(D, 10).text("0123456789");
    assertEquals("0123456789", t.value());
    assertNull(t.originalLength());
  }

  @Test
  void aLongerTextIsCutAtTheLimitAfterDesensitizing() {
    String sent = "x".repeat(15) + "13812345678" + "y".repeat(50);
    TextCut.Text t = new TextCut(D, 20).text(sent);
    assertEquals(sent.length(), t.originalLength());
    assertTrue(t.value().length() <= 20, t.value());
    assertFalse(t.value().contains("138"), "no fragment of the number: " + t.value());
  }

  @Test
  void aCutNeverSplitsASurrogatePair() {
    String sent = "abc" + "\uD83D\uDE00" + "def"; // the emoji takes characters 4 and 5
    TextCut.Text t = new TextCut(D, 4).text(sent);
    assertEquals("abc", t.value());
  }

  @Test
  void longJsonBecomesAStringWhoseRenderingFits() throws Exception {
    JsonNode quoted = JSON.valueToTree(Map.of("rows", List.of("\"a\"", "\"b\"", "\"c\"".repeat(40))));
    TextCut.Json j = new TextCut(D, 50).json(quoted);
    assertEquals(quoted.toString().length(), j.originalLength());
    assertTrue(j.value().isTextual());
    assertTrue(j.value().toString().length() <= 50, "as the session measures it: " + j.value());
    JsonNode small = JSON.readTree("{\"a\":1}");
    assertSame(small, new TextCut(D, 50).json(small).value());
  }
}
