package io.otl.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * The policy keys of {@code PUT /v1/training/{agentId}/policy} are dotted words
 * ({@code trigger.min-samples}, {@code hyperparams.learning-rate}). A strict-JSON refusal of one
 * answered {@code body.* is a number too large} or {@code Duplicate field '*'}: the user could not
 * tell which key to fix (trial t9). A key made of plain words is named; one that may be personal
 * data is still not echoed.
 */
class DottedKeyProblemTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ObjectMapper STRICT = new ObjectMapper()
      .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

  @Test
  void aDottedKeyOfPlainWordsIsNamedInALimitProblem() throws Exception {
    JsonLimits.Problem p = JsonLimits.problem(JSON.readTree("{\"hyperparams.learning-rate\":1e999}"), "body", 32);
    assertEquals("body.hyperparams.learning-rate is a number too large for a double (it would be stored as Infinity)",
        p.message());
    JsonLimits.Problem nul = JsonLimits.problem(JSON.readTree("{\"trigger.cron\":\"\\u0000\"}"), "body", 32);
    assertTrue(nul.message().startsWith("body.trigger.cron contains a NUL"), nul.message());
  }

  @Test
  void aDottedKeyThatMayBePersonalDataIsStillNotEchoed() throws Exception {
    JsonLimits.Problem p = JsonLimits.problem(JSON.readTree("{\"bob@example.com\":1e999}"), "body", 32);
    assertEquals("body.* is a number too large for a double (it would be stored as Infinity)", p.message());
    JsonLimits.Problem phone = JsonLimits.problem(JSON.readTree("{\"tel.13812345678\":\"\\u0000\"}"), "body", 32);
    assertTrue(phone.message().startsWith("body.* contains a NUL"), phone.message());
  }

  @Test
  void aDottedKeySentTwiceIsNamed() {
    IOException e = assertThrows(IOException.class,
        () -> STRICT.readTree("{\"trigger.min-samples\":50,\"trigger.min-samples\":60}"));
    String m = JsonParseProblem.describe(e);
    assertTrue(m.startsWith("Duplicate field 'trigger.min-samples'"), m);
    IOException mail = assertThrows(IOException.class, () -> STRICT.readTree("{\"a@b.cn\":1,\"a@b.cn\":2}"));
    assertTrue(JsonParseProblem.describe(mail).startsWith("Duplicate field '*'"), JsonParseProblem.describe(mail));
  }
}
