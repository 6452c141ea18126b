package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Phone numbers written the national way, without a country code: once stored as sent unless an
 * operator added a custom pattern (a new user's {@code 555-123-4567} reached the journal).
 */
class DesensitizerNationalPhoneTest {
  private final Desensitizer phone = new Desensitizer(true, List.of("phone"), List.of());

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    "call 555-123-4567 now|call [PHONE] now",
    "call (415) 555-0199.|call [PHONE].",
    "call (415)555-0199|call [PHONE]",
    "at 415.555.0199 or 415 555 0199|at [PHONE] or [PHONE]",
    "toll free 1-800-555-1234|toll free [PHONE]",
    "office 010-12345678, shop 0755-1234567|office [PHONE], shop [PHONE]",
    "en dashes 555\u2013123\u20134567|en dashes [PHONE]",
    "full-width ５５５-１２３-４５６７|full-width [PHONE]"
  })
  void nationalNumbersBecomePlaceholders(String in, String out) {
    assertEquals(out, phone.apply(in));
  }

  @ParameterizedTest
  @ValueSource(strings = {
    "on 2024-12-02 at 10:30", "version 1.2.3.4", "order ORD-20241202-000123", "ssn-like 078-05-1120",
    "mixed separators 415-555.0199", "ten digits 4155550199", "range 100-200", "unix 1733300000",
    "longer run 1234-555-0199", "and 415-555-01990 too", "call 555-0100"
  })
  void numbersThatAreNotWrittenAsPhoneNumbersStay(String text) {
    assertEquals(text, phone.apply(text));
  }

  @ParameterizedTest
  @ValueSource(strings = {"555-123-4567", "(415) 555-0199", "010-12345678"})
  void theExportScanFindsThemToo(String text) {
    assertEquals(List.of("phone"), Desensitizer.builtInScanner().findings("x " + text + " y"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"s-555-123-4567", "run 415.555.0199"})
  void theIdCheckIsUnchangedSoIdsOfEarlierBuildsStayAccepted(String id) {
    assertEquals(null, PiiRules.looksLike(id));
  }
}
