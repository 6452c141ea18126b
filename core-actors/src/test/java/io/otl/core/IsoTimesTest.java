package io.otl.core;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

class IsoTimesTest {
  private static final Instant T = Instant.parse("2026-11-20T02:00:00Z");

  @ParameterizedTest
  @ValueSource(strings = {"2026-11-20T02:00:00Z", "2026-11-20T10:00:00+08:00", "2026-11-19T21:00-05:00"})
  void anInstantOrAnOffsetTimeNamesThatInstant(String text) {
    assertEquals(Optional.of(T), IsoTimes.parse(text));
  }

  @ParameterizedTest
  @ValueSource(strings = {"2026-11-20"})
  void aDateIsItsStartInUtc(String text) {
    assertEquals(Optional.of(Instant.parse("2026-11-20T00:00:00Z")), IsoTimes.parse(text));
  }

  @ParameterizedTest
  @NullSource
  @ValueSource(strings = {"", "yesterday", "2026-11-20T02:00:00", "2026-13-01", "1700000000", "2026-11-20 02:00:00Z"})
  void anythingElseIsNone(String text) {
    assertEquals(Optional.empty(), IsoTimes.parse(text));
  }
}
