package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.node.TextNode;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The 400s of design §7.1 for each kind of input; limits at {@code max-text-length} = 10 here. */
class SessionInputValidationTest {
  private final SessionInputValidation v = new SessionInputValidation(10);
  private static final String TEN = "x".repeat(10);
  private static final String ELEVEN = "x".repeat(11);

  private static String tooLong(String field, int length) {
    return field + " is " + length + " characters long; at most 10 are allowed (data-collector.max-text-length)";
  }

  private static SessionInput.Feedback feedback(String kind, Double value) {
    return new SessionInput.Feedback(null, null, kind, value, null, null);
  }

  @Test
  void everyTextFieldIsAllowedUpToTheLimitAndNoFurther() {
    assertNull(v.problem(new SessionInput.Start(null, null, TEN, TEN, Map.of(TEN, TEN))));
    assertEquals(tooLong(".agentVersion", 11), v.problem(new SessionInput.Start(null, null, ELEVEN, null, null)));
    assertEquals(tooLong(".modelVersion", 11), v.problem(new SessionInput.Start(null, null, null, ELEVEN, null)));
    assertNull(v.problem(new SessionInput.Message(null, null, "user", TEN, TEN, 0L)));
    assertEquals(tooLong(".content", 11), v.problem(new SessionInput.Message(null, null, "user", ELEVEN, null, null)));
    assertEquals(tooLong(".msgId", 11), v.problem(new SessionInput.Message(null, null, "user", "", ELEVEN, null)));
    assertNull(v.problem(new SessionInput.ToolCall(null, null, TEN, TEN, null, TextNode.valueOf("12345678"), null, 0L)));
    assertEquals(tooLong(".toolName", 11), v.problem(new SessionInput.ToolCall(null, null, null, ELEVEN, null, null,
        null, null)));
    assertEquals(tooLong(".callId", 11), v.problem(new SessionInput.ToolCall(null, null, ELEVEN, "t", null, null,
        null, null)));
    assertEquals(tooLong(".output", 11), v.problem(new SessionInput.ToolCall(null, null, null, "t", null,
        TextNode.valueOf("123456789"), null, null)));
    assertNull(v.problem(new SessionInput.Reasoning(null, null, 0, TEN, TEN, TEN)));
    assertEquals(tooLong(".thought", 11), v.problem(new SessionInput.Reasoning(null, null, null, ELEVEN, null, null)));
    assertEquals(tooLong(".action", 11), v.problem(new SessionInput.Reasoning(null, null, null, null, ELEVEN, null)));
    assertEquals(tooLong(".observation", 11),
        v.problem(new SessionInput.Reasoning(null, null, null, null, null, ELEVEN)));
    assertEquals(tooLong(".source", 11), v.problem(new SessionInput.Feedback(null, null, "ADOPTED", null, null,
        ELEVEN)));
    assertEquals(tooLong(".msgId", 11), v.problem(new SessionInput.Feedback(null, null, "ADOPTED", null, null, null,
        ELEVEN)));
    assertNull(v.problem(new SessionInput.Result(null, null, "SUCCESS", TEN)));
    assertEquals(tooLong(".detail", 11), v.problem(new SessionInput.Result(null, null, "SUCCESS", ELEVEN)));
  }

  @Test
  void metadataIsNamedByPositionNeverByItsKey() {
    Map<String, String> meta = new LinkedHashMap<>();
    meta.put("ok", "fine");
    meta.put("al@x.cn", ELEVEN);
    assertEquals(tooLong(".metadata value #1", 11), v.problem(new SessionInput.Start(null, null, null, null, meta)));
    assertEquals(tooLong(".metadata key #0", 11),
        v.problem(new SessionInput.Start(null, null, null, null, Map.of(ELEVEN, "v"))));
  }

  @Test
  void idsFollowTheIdRules() {
    assertEquals(".eventId may contain only the characters [A-Za-z0-9._:-]",
        v.problem(new SessionInput.Result("a b", null, "SUCCESS", null)));
    assertTrue(v.problem(new SessionInput.Feedback(null, null, "ADOPTED", null, "", null))
        .startsWith(".feedbackId is required"));
    assertNull(v.problem(new SessionInput.Feedback("e-1", null, "ADOPTED", null, "f-1", null)));
  }

  @Test
  void messagesNeedAKnownRoleContentAndNoNegativeLatency() {
    assertEquals(".role is required: system, user, assistant or tool",
        v.problem(new SessionInput.Message(null, null, null, "c", null, null)));
    assertEquals(".role is not one of the allowed: system, user, assistant, tool",
        v.problem(new SessionInput.Message(null, null, "bot", "c", null, null)));
    assertEquals(".content is required", v.problem(new SessionInput.Message(null, null, "tool", null, null, null)));
    assertEquals(".latencyMs must not be negative",
        v.problem(new SessionInput.Message(null, null, "system", "c", null, -1L)));
  }

  @Test
  void onlyTheGatewaysCutFieldsWithTheirLengthBeforeTheCutAreAccepted() {
    assertNull(v.problem(message(Map.of("content", 11))));
    assertEquals(".truncated.content must be the field's length before the cut, over 10",
        v.problem(message(Map.of("content", 10))));
    Map<String, Integer> missing = new LinkedHashMap<>();
    missing.put("content", null);
    assertEquals(".truncated.content must be the field's length before the cut, over 10", v.problem(message(missing)));
    assertEquals(".truncated names a field that cannot be cut; allowed: content",
        v.problem(message(Map.of("msgId", 20))));
    assertNull(v.problem(new SessionInput.ToolCall(null, null, null, "t", null, null, true, null,
        Map.of("input", 11, "output", 12))));
    assertEquals(".truncated names a field that cannot be cut; allowed: input, output",
        v.problem(new SessionInput.ToolCall(null, null, null, "t", null, null, true, null, Map.of("toolName", 11))));
  }

  private static SessionInput.Message message(Map<String, Integer> truncated) {
    return new SessionInput.Message(null, null, "assistant", "cut", null, null, null, truncated);
  }

  @Test
  void toolCallsNeedANameAndNoNegativeLatency() {
    assertEquals(".toolName is required", v.problem(new SessionInput.ToolCall(null, null, null, null, null, null,
        null, null)));
    assertEquals(".toolName is required", v.problem(new SessionInput.ToolCall(null, null, null, " ", null, null,
        null, null)));
    assertEquals(".latencyMs must not be negative", v.problem(new SessionInput.ToolCall(null, null, null, "t", null,
        null, null, -1L)));
  }

  @Test
  void reasoningStepsHaveNoNegativeIndex() {
    assertEquals(".index must not be negative", v.problem(new SessionInput.Reasoning(null, null, -1, null, null, null)));
  }

  @Test
  void feedbackHasAKnownKindAndARatingAnIntegerFromOneToFive() {
    assertTrue(v.problem(feedback("LIKE", null)).startsWith(".kind is not one of the allowed: THUMBS_UP,"));
    assertTrue(v.problem(feedback("LIKE", null)).endsWith(FeedbackKindAliases.DESCRIPTION));
    assertEquals(".value is required for a RATING (an integer from 1 to 5)", v.problem(feedback("RATING", null)));
    for (double ok : new double[] {1, 2, 5}) assertNull(v.problem(feedback("RATING", ok)), "rating " + ok);
    for (double bad : new double[] {0, -2, 6, 100}) {
      assertEquals(".value is out of range: a RATING is an integer from 1 to 5", v.problem(feedback("RATING", bad)),
          "rating " + bad);
    }
    // 3.5 was "out of range", though it is within 1-5: the message says what is wrong with it
    for (double bad : new double[] {0.99, 5.01, 3.5}) {
      assertEquals(".value must be a whole number for a RATING (an integer from 1 to 5)",
          v.problem(feedback("RATING", bad)), "rating " + bad);
    }
  }

  /**
   * A thumb takes no value, and the value clients send with one (1 with up, -1 with down) is accepted; one
   * that says the opposite of the kind was stored as the kind without a word, and is refused naming both.
   */
  @Test
  void aThumbsValueIsAcceptedUnlessItContradictsTheKind() {
    for (double ok : new double[] {1, 0, 42}) assertNull(v.problem(feedback("THUMBS_UP", ok)), "up " + ok);
    for (double ok : new double[] {-1, 0, -5}) assertNull(v.problem(feedback("THUMBS_DOWN", ok)), "down " + ok);
    for (String other : new String[] {"ADOPTED", "REPEATED_QUESTION", "HUMAN_HANDOFF"}) {
      assertNull(v.problem(feedback(other, -1.0)), other + " takes no value and ignores one");
    }
    assertEquals(".value is negative, which contradicts kind THUMBS_UP: send THUMBS_DOWN, or no value"
        + " (a thumb takes none; a positive value or 0 is accepted and not stored)", v.problem(feedback("THUMBS_UP", -1.0)));
    assertEquals(".value is positive, which contradicts kind THUMBS_DOWN: send THUMBS_UP, or no value"
        + " (a thumb takes none; a negative value or 0 is accepted and not stored)", v.problem(feedback("THUMBS_DOWN", 1.0)));
    // AgentScope's aliases are the same kinds
    assertTrue(v.problem(feedback("POSITIVE", -1.0)).contains("contradicts kind THUMBS_UP"));
  }

  @Test
  void resultsHaveAKnownStatusAndUnknownInputsAreRefused() {
    assertEquals(".status is not one of the allowed: SUCCESS, FAILURE, TIMEOUT",
        v.problem(new SessionInput.Result(null, null, "DONE", null)));
    // A result without a status is told the status is required, not that null is not allowed (trial t108).
    assertEquals(".status is required: SUCCESS, FAILURE or TIMEOUT",
        v.problem(new SessionInput.Result(null, null, null, null)));
    assertEquals(" is null", v.problem(null));
  }
}
