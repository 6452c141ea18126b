package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The length check of tool input/output skips rendering only when the verdict cannot change. */
class SessionInputValidationLengthTest {
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  @Test
  void theBoundIsNeverBelowTheRenderedLength() {
    Random random = new Random(18);
    for (int i = 0; i < 2_000; i++) {
      JsonNode node = randomTree(random, 3);
      int rendered = node.toString().length();
      long bound = SessionInputValidation.jsonLengthAtMost(node, 1_000_000);
      assertTrue(bound >= rendered, node + ": bound " + bound + " < " + rendered);
    }
  }

  @Test
  void theVerdictAndMessageAreThoseOfTheRenderedText() {
    Random random = new Random(7);
    for (int i = 0; i < 2_000; i++) {
      JsonNode node = randomTree(random, 3);
      int length = node.toString().length();
      for (int max : new int[] {length - 1, length, length + 1, 5}) {
        if (max < 2) continue;
        SessionInputValidation validation = new SessionInputValidation(max);
        SessionInput.ToolCall call = new SessionInput.ToolCall(null, null, "c", "t", node, null, true, 1L);
        String expected = length > max
            ? ".input is " + length + " characters long; at most " + max
                + " are allowed (data-collector.max-text-length)"
            : null;
        assertEquals(expected, validation.problem(call), node + " with max " + max);
      }
    }
  }

  /** The bound of each node kind, as the comments of {@code jsonLengthAtMost} define it. */
  @Test
  void theBoundIsQuotesPlusSixPerCharacterAndTheRenderedLengthOfScalars() {
    assertEquals(14, SessionInputValidation.jsonLengthAtMost(F.textNode("ab"), 100), "2 + 6 x 2");
    assertEquals(5, SessionInputValidation.jsonLengthAtMost(F.booleanNode(false), 100));
    assertEquals(4, SessionInputValidation.jsonLengthAtMost(F.nullNode(), 100));
    assertEquals(5, SessionInputValidation.jsonLengthAtMost(F.numberNode(12345), 100));
    assertEquals(11, SessionInputValidation.jsonLengthAtMost(F.numberNode(-9_000_000_000L), 100));
    assertEquals(1, SessionInputValidation.jsonLengthAtMost(F.numberNode((short) 7), 100));
    assertEquals(32, SessionInputValidation.jsonLengthAtMost(F.numberNode(0.5), 100));
    assertEquals(32, SessionInputValidation.jsonLengthAtMost(F.numberNode(0.5f), 100));
    // Kinds whose text is not bounded here are "over", so the caller renders them.
    assertEquals(101, SessionInputValidation.jsonLengthAtMost(F.numberNode(BigInteger.ONE), 100));
    assertEquals(101, SessionInputValidation.jsonLengthAtMost(F.numberNode(BigDecimal.ONE), 100));
    assertEquals(101, SessionInputValidation.jsonLengthAtMost(F.binaryNode(new byte[] {1}), 100));
  }

  @Test
  void containersAddBracketsCommasQuotesAndColonsAndStopOncePastTheLimit() {
    ArrayNode three = F.arrayNode().add(1).add(2).add(3);
    assertEquals(7, SessionInputValidation.jsonLengthAtMost(three, 7), "[1,2,3]: exactly at the limit");
    assertEquals(7, SessionInputValidation.jsonLengthAtMost(three, 6), "past 6: the limit plus one");
    assertEquals(2, SessionInputValidation.jsonLengthAtMost(F.arrayNode(), 100));
    assertEquals(5, SessionInputValidation.jsonLengthAtMost(F.arrayNode().add(F.arrayNode().add(1)), 100));
    assertEquals(21, SessionInputValidation.jsonLengthAtMost(F.arrayNode().add("abcdef"), 20), "a child past it");
    ObjectNode two = F.objectNode().put("a", 1).put("bc", true);
    assertEquals(33, SessionInputValidation.jsonLengthAtMost(two, 33), "2 + 1 comma + (3 + 6 + 1) + (3 + 12 + 5)");
    assertEquals(33, SessionInputValidation.jsonLengthAtMost(two, 32));
    assertEquals(26, SessionInputValidation.jsonLengthAtMost(F.objectNode().put("a", "xyz"), 25), "31 > 25");
    assertEquals(41, SessionInputValidation.jsonLengthAtMost(F.objectNode().put("a", "abcdefgh"), 40), "value 50");
  }

  private static JsonNode randomTree(Random random, int depth) {
    int kind = random.nextInt(depth > 0 ? 10 : 7);
    return switch (kind) {
      case 0 -> F.textNode(randomText(random));
      case 1 -> F.numberNode(random.nextLong());
      case 2 -> F.numberNode(random.nextDouble() * 1e6);
      case 3 -> F.booleanNode(random.nextBoolean());
      case 4 -> F.nullNode();
      case 5 -> F.numberNode(new BigDecimal("1E+" + random.nextInt(40)));
      case 6 -> F.numberNode(BigInteger.TEN.pow(random.nextInt(30)));
      case 7, 8 -> {
        ObjectNode o = F.objectNode();
        for (int i = random.nextInt(4); i > 0; i--) o.set(randomText(random), randomTree(random, depth - 1));
        yield o;
      }
      default -> {
        ArrayNode a = F.arrayNode();
        for (int i = random.nextInt(4); i > 0; i--) a.add(randomTree(random, depth - 1));
        yield a;
      }
    };
  }

  private static String randomText(Random random) {
    String alphabet = "ab \"\\\n\t\u0001é中/<";
    StringBuilder sb = new StringBuilder();
    for (int i = random.nextInt(12); i > 0; i--) sb.append(alphabet.charAt(random.nextInt(alphabet.length())));
    return sb.toString();
  }
}
