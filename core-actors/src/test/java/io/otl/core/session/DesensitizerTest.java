package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

class DesensitizerTest {
  private final Desensitizer d = new Desensitizer(true, List.of("phone", "id_card", "email"), List.of("ORD-\\d{6}"));

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    "call 13812345678 now|call [PHONE] now",
    "tel +86 138 1234 5678.|tel [PHONE].",
    "us +1 415 555 2671|us [PHONE]",
    "uk +44 20 7946 0958 ok|uk [PHONE] ok",
    "id 110101199003077578|id [ID_CARD]",
    "id 11010119900307757x end|id [ID_CARD] end",
    "old id 110101900307757|old id [ID_CARD]",
    "mail john.doe+tag@mail.example.co.uk!|mail [EMAIL]!",
    "order ORD-123456 shipped|order [REDACTED] shipped",
    "version 2.3.1 and 42 apples|version 2.3.1 and 42 apples",
    "price 12345678901234567890 units|price 12345678901234567890 units"
  })
  void replacesPersonalDataWithTypedPlaceholders(String in, String out) {
    assertEquals(out, d.apply(in));
  }

  @Test
  void disabledLeavesTextAlone() {
    Desensitizer off = new Desensitizer(false, List.of("phone"), List.of());
    assertEquals("13812345678", off.apply("13812345678"));
  }

  @Test
  void unknownPatternNameIsRefusedWithTheAllowedNames() {
    var e = assertThrows(IllegalArgumentException.class, () -> new Desensitizer(true, List.of("ssn"), List.of()));
    assertTrue(e.getMessage().contains("phone, id_card, email"));
  }

  @Test
  void findingsNameTheRules() {
    assertEquals(List.of("email", "phone"), Desensitizer.builtInScanner().findings("a@b.cd 13812345678"));
    assertTrue(Desensitizer.builtInScanner().findings("clean text").isEmpty());
  }

  /** What an export rewrites in a line (review t170): strings and keys, never a number's value or type. */
  @Test
  void applyToStringsLeavesEveryNumberAsItIs() throws Exception {
    var json = new com.fasterxml.jackson.databind.ObjectMapper();
    var tree = json.readTree("{\"n\":13812345678,\"f\":1.3812345678E10,\"s\":\"13812345678\",\"13812345678\":[1]}");
    assertEquals(json.readTree("{\"n\":13812345678,\"f\":1.3812345678E10,\"s\":\"[PHONE]\",\"[PHONE]\":[1]}"),
        Desensitizer.builtInScanner().applyToStrings(tree));
    assertEquals(json.readTree("{\"n\":\"[PHONE]\",\"f\":\"[PHONE]\",\"s\":\"[PHONE]\",\"[PHONE]\":[1]}"),
        Desensitizer.builtInScanner().apply(tree), "apply itself, what ingestion runs, is unchanged");
  }
}
