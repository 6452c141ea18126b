package io.otl.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * Trial t120: what every edge says of a document that is no JSON (an HTTP 400, a Kafka dead letter's
 * {@code otl-error}) told the client to enable a feature of the node's parser, or named the parser's
 * method and its limit of 1000 levels. A client can set neither: the words say what JSON may hold.
 */
class ParserWordsProblemTest {
  private static String describe(String document) {
    IOException e = assertThrows(IOException.class,
        () -> StrictDocument.read(document.getBytes(StandardCharsets.UTF_8)));
    return JsonParseProblem.describe(e);
  }

  @Test
  void aDocumentDeeperThanTheParsersLimitIsSaidToBeNestedTooDeep() {
    IOException e = assertThrows(IOException.class,
        () -> StrictDocument.read("[".repeat(5000).getBytes(StandardCharsets.UTF_8)));
    assertTrue(JsonParseProblem.tooDeep(e));
    assertEquals("the document is nested more than 1000 levels deep", JsonParseProblem.describe(e));
    assertFalse(JsonParseProblem.tooDeep(assertThrows(IOException.class,
        () -> StrictDocument.read("{\"a\":".getBytes(StandardCharsets.UTF_8)))));
  }

  @Test
  void noAnswerAdvisesEnablingAParserFeature() {
    for (String doc : new String[] {"{\"v\":NaN}", "{\"v\":Infinity}", "{/* c */\"v\":1}", "{\"v\":1} // c",
        "{\"v\":+1}", "{\"v\":" + "9".repeat(1001) + "}", "{'v':1}", "{v:1}", "{\"v\":\"\\q\"}", "{\"v\":01}"}) {
      String m = describe(doc);
      for (String parserWord : new String[] {"Feature", "enable", "StreamReadConstraints", "`"}) {
        assertFalse(m.contains(parserWord), doc + " answered with the parser's words: " + m);
      }
    }
    assertEquals("Non-standard token 'NaN' (line 1, column 9)", describe("{\"v\":NaN}"));
  }

  /**
   * Trial t155: data after the document ({@code {..}{}}, {@code {..} 5}) was answered on every edge (the
   * events API, the gateway, {@code /v1/traces}, a policy PUT) with Jackson's words for its own programmer:
   * {@code Trailing token (of type START_OBJECT) found after value (bound as
   * `com.fasterxml.jackson.databind.JsonNode`): not allowed as per `DeserializationFeature.FAIL_ON_TRAILING_TOKENS`}.
   */
  @Test
  void dataAfterTheDocumentIsSaidInPlainWords() {
    for (String doc : new String[] {"{\"v\":1}{}", "{\"v\":1} 5", "{\"v\":1}[]", "{\"v\":1} \"x\"", "[1] true"}) {
      String m = describe(doc);
      for (String parserWord : new String[] {"Feature", "Trailing token", "JsonNode", "fasterxml", "START_", "`"}) {
        assertFalse(m.contains(parserWord), doc + " answered with the parser's words: " + m);
      }
      assertTrue(m.startsWith("data after the end of the JSON document"), doc + ": " + m);
    }
    assertEquals("data after the end of the JSON document: send exactly one (line 1, column 8)", describe("{\"v\":1}{}"));
  }
}
