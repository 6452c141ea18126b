package io.otl.persistence.schema;

import java.time.Instant;
import java.time.LocalDate;
import java.time.format.DateTimeFormatter;

/**
 * {@link DateTimeFormatter#ISO_INSTANT} for the instants the journal holds (years 1970 to 9999, UTC,
 * {@code 2026-12-01T10:05:11.123Z}), without the formatter's general machinery: every event carries
 * three instants, and formatting and parsing them was a quarter of the write serializer's time (W1
 * profile, benchmarks/BENCHMARKS.md). Output is character for character ISO_INSTANT's (fraction in
 * groups of three digits, none for whole seconds); anything outside the fast form returns null and
 * the caller uses the JDK.
 */
final class IsoInstants {
  private IsoInstants() {}

  /** 9999-12-31T23:59:59Z: the last instant ISO_INSTANT writes with a four-digit year. */
  private static final long MAX_FAST_SECOND = 253_402_300_799L;

  /** The ISO_INSTANT text of {@code instant} in {@code out} (length 20 to 30), or -1 when not the fast form. */
  static int format(Instant instant, char[] out) {
    long seconds = instant.getEpochSecond();
    if (seconds < 0 || seconds > MAX_FAST_SECOND) return -1;
    LocalDate date = LocalDate.ofEpochDay(seconds / 86_400);
    int secondOfDay = (int) (seconds % 86_400);
    digits(out, 0, date.getYear(), 4);
    out[4] = '-';
    digits(out, 5, date.getMonthValue(), 2);
    out[7] = '-';
    digits(out, 8, date.getDayOfMonth(), 2);
    out[10] = 'T';
    digits(out, 11, secondOfDay / 3600, 2);
    out[13] = ':';
    digits(out, 14, secondOfDay / 60 % 60, 2);
    out[16] = ':';
    digits(out, 17, secondOfDay % 60, 2);
    int n = 19;
    int nano = instant.getNano();
    if (nano != 0) {
      out[n++] = '.';
      if (nano % 1_000_000 == 0) {
        digits(out, n, nano / 1_000_000, 3);
        n += 3;
      } else if (nano % 1_000 == 0) {
        digits(out, n, nano / 1_000, 6);
        n += 6;
      } else {
        digits(out, n, nano, 9);
        n += 9;
      }
    }
    out[n++] = 'Z';
    return n;
  }

  static String format(Instant instant) {
    char[] out = new char[30];
    int n = format(instant, out);
    return n < 0 ? DateTimeFormatter.ISO_INSTANT.format(instant) : new String(out, 0, n);
  }

  /**
   * The instant of {@code text} when it is in the form ISO_INSTANT writes ({@code yyyy-MM-ddTHH:mm:ss},
   * optionally {@code .} and 1 to 9 digits, then {@code Z}; year 1970 or later, no leap second), else
   * null: the caller then parses it as before, with whatever leniency that has.
   */
  static Instant parse(String text) {
    int len = text.length();
    if (len < 20 || len > 30 || text.charAt(len - 1) != 'Z') return null;
    if (text.charAt(4) != '-' || text.charAt(7) != '-' || text.charAt(10) != 'T' || text.charAt(13) != ':'
        || text.charAt(16) != ':') {
      return null;
    }
    int year = number(text, 0, 4);
    int month = number(text, 5, 2);
    int day = number(text, 8, 2);
    int hour = number(text, 11, 2);
    int minute = number(text, 14, 2);
    int second = number(text, 17, 2);
    if ((year | month | day | hour | minute | second) < 0) return null; // a non-digit
    if (year < 1970 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
    if (day > java.time.Month.of(month).length(java.time.Year.isLeap(year))) return null;
    int nano = 0;
    if (len > 20) {
      if (text.charAt(19) != '.' || len == 21) return null;
      int fractionDigits = len - 21;
      int fraction = number(text, 20, fractionDigits);
      if (fraction < 0) return null;
      nano = fraction;
      for (int i = fractionDigits; i < 9; i++) nano *= 10;
    }
    long epochDay = LocalDate.of(year, month, day).toEpochDay();
    return Instant.ofEpochSecond(epochDay * 86_400 + hour * 3600L + minute * 60L + second, nano);
  }

  private static void digits(char[] out, int at, int value, int width) {
    for (int i = at + width - 1; i >= at; i--) {
      out[i] = (char) ('0' + value % 10);
      value /= 10;
    }
  }

  /** The decimal number of {@code width} ASCII digits at {@code at}, or -1 when one is not a digit. */
  private static int number(String text, int at, int width) {
    int value = 0;
    for (int i = at; i < at + width; i++) {
      char c = text.charAt(i);
      if (c < '0' || c > '9') return -1;
      value = value * 10 + (c - '0');
    }
    return value;
  }
}
