package io.otl.core;

import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.Optional;

/**
 * The times a user types for a point in the journal's history (the API's {@code asOf}, {@code since},
 * {@code until}; the command line's {@code --as-of}, {@code --since}, {@code --until}), read one way
 * everywhere: an instant ({@code 2026-11-20T02:00:00Z}), a time with an offset
 * ({@code 2026-11-20T10:00:00+08:00}) or a date (its start in UTC). Each caller words its own error.
 */
public final class IsoTimes {
  private IsoTimes() {}

  /** The instant {@code text} names, or empty when it is none of the three forms. */
  public static Optional<Instant> parse(String text) {
    if (text == null) return Optional.empty();
    try {
      return Optional.of(Instant.parse(text));
    } catch (DateTimeParseException e) {
      // other forms below
    }
    try {
      return Optional.of(OffsetDateTime.parse(text).toInstant());
    } catch (DateTimeParseException e) {
      // a date below
    }
    try {
      return Optional.of(LocalDate.parse(text).atStartOfDay(ZoneOffset.UTC).toInstant());
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }

  /**
   * Whether {@code text} is a date and time without a zone ({@code 2026-11-20T10:00:00}): ISO-8601, but
   * no instant, since the zone meant cannot be guessed (the machine's is rarely it, and the journal's
   * times are UTC). "Not an ISO-8601 time" sent the user looking for a typo (trial t73), so callers say
   * what is missing.
   */
  public static boolean withoutZone(String text) {
    if (text == null) return false;
    try {
      LocalDateTime.parse(text);
      return true;
    } catch (DateTimeParseException e) {
      return false;
    }
  }
}
