package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.Ids;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The formats that slipped through before issue #14, in text, JSON values, JSON keys and ids. */
class DesensitizerFormatsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final Desensitizer d = new Desensitizer(true, List.of("phone", "id_card", "email"), List.of());

  static Stream<PiiSamples.Sample> samples() {
    return PiiSamples.ALL.stream();
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samples")
  void everyFormatIsReplacedInFreeText(PiiSamples.Sample s) {
    String out = d.apply("call me at " + s.text() + ", thanks");
    assertFalse(s.leaksIn(out), out);
    assertTrue(out.contains(s.placeholder()), out);
    assertEquals(List.of(), Desensitizer.builtInScanner().findings(out));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samples")
  void everyFormatIsReplacedInJsonKeysAndValues(PiiSamples.Sample s) throws Exception {
    JsonNode in = JSON.readTree("{\"" + s.text() + "\": {\"v\": [\"x " + s.text() + "\"]}}");
    String out = JSON.writeValueAsString(d.apply(in));
    assertFalse(s.leaksIn(out), out);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("samples")
  void everyFormatIsRefusedAsAnId(PiiSamples.Sample s) {
    String id = s.text();
    String problem = Ids.problem("sessionId", id, Ids.MAX_SESSION_ID);
    assertNotNull(problem, id);
    assertFalse(s.leaksIn(problem), problem);
  }

  /** RFC 5322's quoted local part and IP literals (trial t28 found both stored as sent). */
  @Test
  void quotedLocalPartsAndIpLiteralsAreEmails() {
    assertEquals("write to [EMAIL] or [EMAIL], not \"me\" @home",
        d.apply("write to \"jane doe\"@mail.example.net or ops@[IPv6:2001:db8::1], not \"me\" @home"));
  }

  @Test
  void anIdThatLooksLikeAPhoneIsRefusedWithoutEchoingIt() {
    assertEquals("sessionId looks like a phone number; use an opaque id",
        Ids.problem("sessionId", "13812345678", Ids.MAX_SESSION_ID));
    assertEquals(".eventId looks like an ID card number; use an opaque id",
        Ids.problem(".eventId", "ID110107199003071288", 128));
    assertFalse(Ids.isValidAgentId("bot-13812345678"));
    // Beside a UUID, a phone number is still a phone number.
    assertEquals("sessionId looks like a phone number; use an opaque id",
        Ids.problem("sessionId", "13812345678-0c138123-4567-8000-a000-446655440000", Ids.MAX_SESSION_ID));
  }

  @ParameterizedTest
  @ValueSource(strings = {"s-1", "550e8400-e29b-41d4-a716-446655440000", "0c138123-4567-8000-a000-138123456780",
      "job-12-support-bot", "v7", "proxy-3", "d:0123abcd", "2026-11-30T10:00:00Z",
      // a UUID inside an id: its hex groups hold a phone-shaped run by chance
      "long-0c138123-4567-8000-a000-a13812345678", "sess-4f1e2d3c-0000-4000-8000-013812345678:turn-2"})
  void opaqueIdsStayValid(String id) {
    assertNull(Ids.problem("sessionId", id, Ids.MAX_SESSION_ID), id);
  }

  @Test
  void longIntegersInToolJsonAreScanned() throws Exception {
    JsonNode in = JSON.readTree("{\"num\": 13812345678, \"id\": 110101199003077578, \"n\": 1234567, \"small\": 42}");
    JsonNode out = d.apply(in);
    assertEquals("[PHONE]", out.get("num").textValue());
    assertEquals("[ID_CARD]", out.get("id").textValue());
    assertEquals(1234567, out.get("n").intValue());
    assertEquals(42, out.get("small").intValue());
  }

  @Test
  void floatsWithoutAFractionAreScannedAsIntegers() throws Exception {
    JsonNode in = JSON.readTree("{\"num\": 13812345678.0, \"exp\": 1.3812345678e10, \"neg\": -13812345678.00,"
        + " \"ratio\": 0.5, \"ts\": 1733126400000.0, \"frac\": 13812345678.25}");
    JsonNode out = d.apply(in);
    assertEquals("[PHONE]", out.get("num").textValue());
    assertEquals("[PHONE]", out.get("exp").textValue());
    assertEquals("-[PHONE]", out.get("neg").textValue());
    assertEquals(0.5, out.get("ratio").doubleValue());
    assertTrue(out.get("ts").isNumber(), "a timestamp stays a number");
    assertTrue(out.get("frac").isNumber(), "a measurement with a fraction stays a number");
  }

  @Test
  void keysThatDesensitizeAlikeAreKeptApart() throws Exception {
    JsonNode in = JSON.readTree("{\"a@example.com\": 1, \"b@example.org\": 2, \"[EMAIL]\": 3}");
    JsonNode out = d.apply(in);
    assertEquals(3, out.size(), out.toString());
    assertEquals(1, out.get("[EMAIL]").intValue());
    assertEquals(2, out.get("[EMAIL]#2").intValue());
    assertEquals(3, out.get("[EMAIL]#3").intValue());
    Map<String, String> meta = new LinkedHashMap<>();
    meta.put("13812345678", "x");
    meta.put("13912345678", "y");
    assertEquals(Map.of("[PHONE]", "x", "[PHONE]#2", "y"), d.apply(meta));
  }

  @Test
  void textWithoutPiiIsNotNormalised() {
    String chinese = "你好，请问１号楼在哪里？";
    assertEquals(chinese, d.apply(chinese));
    assertEquals("version 2.3.1, 42 apples, pi 3.14159265358979", d.apply("version 2.3.1, 42 apples, pi 3.14159265358979"));
  }

  @Test
  void uuidMessageIdsStayIntact() {
    String uuid = "0c138123-4567-8000-a000-138123456780";
    assertEquals(uuid, d.applyToId(uuid));
    assertEquals("[PHONE]", d.applyToId("13812345678"));
  }
}
