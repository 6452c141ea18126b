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
