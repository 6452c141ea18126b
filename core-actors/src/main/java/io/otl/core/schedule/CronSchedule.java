package io.otl.core.schedule;

import java.time.DayOfWeek;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;

/**
 * A 6-field cron expression, seconds first, as Quartz writes it:
 *
 * <pre>
 *   seconds  minutes  hours  day-of-month  month        day-of-week
 *   0-59     0-59     0-23   1-31          1-12/JAN-DEC  1-7/SUN-SAT (1 = SUN, as in Quartz)
 * </pre>
 *
 * Each field accepts {@code *}, a value, a range {@code a-b} (wrapping when {@code a > b}, e.g.
 * {@code FRI-MON}), a step {@code *}{@code /n}, {@code a/n} or {@code a-b/n}, and comma-separated
 * lists of these. {@code ?} (day-of-month and day-of-week only) means "no constraint", and so does
 * {@code *}. As in Quartz, day-of-month and day-of-week cannot both be restricted: one of them
 * must be {@code ?} or {@code *}. Quartz's {@code L}, {@code W}, {@code #} and the optional
 * seventh (year) field are not supported and are rejected with a message saying so.
 *
 * <p>Times are wall-clock times in the zone of the instant passed to {@link #nextAfter}. A local
 * time skipped by a daylight-saving change fires once, shifted forward by the length of the gap
 * (as {@link ZonedDateTime#of} does); a local time that occurs twice fires only once.
 *
 * <p>Instances are immutable and thread-safe. Parse errors are {@link IllegalArgumentException}s
 * whose message names the field, the text and the allowed range.
 */
public final class CronSchedule {

  /** How far ahead {@link #nextAfter} searches before concluding the expression never fires. */
  private static final int SEARCH_YEARS = 10;

  private static final String[] MONTH_NAMES = {
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"
  };
  private static final String[] DAY_NAMES = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

  private enum Field {
    SECONDS("seconds", 0, 59, null),
    MINUTES("minutes", 0, 59, null),
    HOURS("hours", 0, 23, null),
    DAY_OF_MONTH("day-of-month", 1, 31, null),
    MONTH("month", 1, 12, MONTH_NAMES),
    DAY_OF_WEEK("day-of-week", 1, 7, DAY_NAMES);

    final String label;
    final int min;
    final int max;
    final String[] names; // names[i] stands for min + i

    Field(String label, int min, int max, String[] names) {
      this.label = label;
      this.min = min;
      this.max = max;
      this.names = names;
    }

    String allowed() {
      String range = min + "-" + max;
      if (names == null) {
        return range;
      }
      return range + " or " + names[0] + "-" + names[names.length - 1]
          + (this == DAY_OF_WEEK ? " (1 = SUN … 7 = SAT)" : "");
    }
  }

  private final String expression;
  private final BitSet seconds;
  private final BitSet minutes;
  private final BitSet hours;
  private final BitSet daysOfMonth;
  private final BitSet months;
  private final BitSet daysOfWeek; // 1 = SUN … 7 = SAT
  private final boolean domConstrained;
  private final boolean dowConstrained;

  private CronSchedule(String expression, BitSet[] sets, boolean domConstrained,
      boolean dowConstrained) {
    this.expression = expression;
    this.seconds = sets[0];
    this.minutes = sets[1];
    this.hours = sets[2];
    this.daysOfMonth = sets[3];
    this.months = sets[4];
    this.daysOfWeek = sets[5];
    this.domConstrained = domConstrained;
    this.dowConstrained = dowConstrained;
  }

  /**
   * Parses a 6-field expression such as {@code "0 0 2 * * ?"} (every day at 02:00:00).
   *
   * @throws IllegalArgumentException naming what is wrong and what is allowed
   */
  public static CronSchedule parse(String expression) {
    if (expression == null || expression.isBlank()) {
      throw new IllegalArgumentException("cron expression is empty; expected 6 fields "
          + "(seconds minutes hours day-of-month month day-of-week), e.g. \"0 0 2 * * ?\"");
    }
    String trimmed = expression.trim();
    String[] parts = trimmed.split("\\s+");
    if (parts.length != 6) {
      String hint = parts.length == 7
          ? " (the optional Quartz year field is not supported)"
          : parts.length == 5 ? " (a seconds field comes first: \"0 " + trimmed + "\"?)" : "";
      throw new IllegalArgumentException("cron expression \"" + trimmed + "\" has " + parts.length
          + " fields; expected 6 (seconds minutes hours day-of-month month day-of-week)" + hint);
    }
    Field[] fields = Field.values();
    BitSet[] sets = new BitSet[6];
    boolean[] constrained = new boolean[6];
    for (int i = 0; i < 6; i++) {
      Field field = fields[i];
      String text = parts[i];
      boolean unconstrained = text.equals("*") || text.equals("?");
      if (text.equals("?") && field != Field.DAY_OF_MONTH && field != Field.DAY_OF_WEEK) {
        throw new IllegalArgumentException(field.label + " field \"?\": '?' is only allowed in "
            + "day-of-month and day-of-week");
      }
      sets[i] = unconstrained ? full(field) : parseField(field, text);
      constrained[i] = !unconstrained;
    }
    if (constrained[3] && constrained[5]) {
      throw new IllegalArgumentException("cron expression \"" + trimmed + "\" restricts both "
          + "day-of-month and day-of-week; as in Quartz, one of them must be '?' "
          + "(e.g. \"0 0 2 ? * MON-FRI\" or \"0 0 2 1 * ?\")");
    }
    return new CronSchedule(trimmed, sets, constrained[3], constrained[5]);
  }

  /** The expression as given (trimmed). */
  public String expression() {
    return expression;
  }

  /**
   * The first time strictly after {@code t} that matches, in {@code t}'s zone; empty when the
   * expression cannot match within the next {@value #SEARCH_YEARS} years (e.g. {@code 0 0 0 31 2 ?}).
   */
  public Optional<ZonedDateTime> nextAfter(ZonedDateTime t) {
    Objects.requireNonNull(t, "t");
    ZoneId zone = t.getZone();
    LocalDateTime c = t.toLocalDateTime().truncatedTo(ChronoUnit.SECONDS).plusSeconds(1);
    int lastYear = c.getYear() + SEARCH_YEARS;
    while (c.getYear() <= lastYear) {
      if (!months.get(c.getMonthValue())) {
        c = c.toLocalDate().withDayOfMonth(1).plusMonths(1).atStartOfDay();
        continue;
      }
      if (!dayMatches(c.toLocalDate())) {
        c = c.toLocalDate().plusDays(1).atStartOfDay();
        continue;
      }
      int h = hours.nextSetBit(c.getHour());
      if (h < 0) {
        c = c.toLocalDate().plusDays(1).atStartOfDay();
        continue;
      }
      if (h != c.getHour()) {
        c = c.withHour(h).withMinute(0).withSecond(0);
      }
      int m = minutes.nextSetBit(c.getMinute());
      if (m < 0) {
        c = c.truncatedTo(ChronoUnit.HOURS).plusHours(1);
        continue;
      }
      if (m != c.getMinute()) {
        c = c.withMinute(m).withSecond(0);
      }
      int s = seconds.nextSetBit(c.getSecond());
      if (s < 0) {
        c = c.truncatedTo(ChronoUnit.MINUTES).plusMinutes(1);
        continue;
      }
      c = c.withSecond(s);
      ZonedDateTime candidate = ZonedDateTime.of(c, zone);
      if (!candidate.isAfter(t)) {
        // Local time after t's local time but an earlier instant: an overlap at a DST change.
        candidate = candidate.withLaterOffsetAtOverlap();
      }
      if (candidate.isAfter(t)) {
        return Optional.of(candidate);
      }
      c = c.plusSeconds(1);
    }
    return Optional.empty();
  }

  private boolean dayMatches(LocalDate date) {
    if (domConstrained && !daysOfMonth.get(date.getDayOfMonth())) {
      return false;
    }
    if (dowConstrained) {
      DayOfWeek dow = date.getDayOfWeek();
      int quartz = dow.getValue() % 7 + 1; // MONDAY(1) -> 2 … SUNDAY(7) -> 1
      return daysOfWeek.get(quartz);
    }
    return true;
  }

  /**
   * The days this expression fires on, by name ({@code "SUN-THU"} for {@code 1-5}), when its
   * day-of-week field gives days by number; empty when it uses names or no day restriction. The
   * numbers count as in Quartz, 1 = SUN … 7 = SAT, but Spring's {@code @Scheduled}, the cron that
   * AgentScope Java users write, counts 1 = MON … 7 = SUN: the same digits name other days there,
   * so whoever reads the configuration is told which days are meant. A step ({@code *}{@code /2})
   * is no day number.
   */
  public Optional<String> daysOfWeekGivenByNumber() {
    String field = expression.split("\\s+")[5];
    if (!dowConstrained || !field.replaceAll("/\\d+", "").matches(".*\\d.*")) {
      return Optional.empty();
    }
    return Optional.of(compact(daysOfWeek, Field.DAY_OF_WEEK));
  }

  /**
   * An English description, e.g. {@code every day at 02:00:00} or
   * {@code at second 0, minute 0,15,30,45, hour 9-17, on MON-FRI}.
   */
  public String describe() {
    StringBuilder sb = new StringBuilder();
    boolean singleTime = seconds.cardinality() == 1 && minutes.cardinality() == 1
        && hours.cardinality() == 1;
    String days;
    if (domConstrained) {
      days = "on day " + compact(daysOfMonth, Field.DAY_OF_MONTH) + " of the month";
    } else if (dowConstrained) {
      days = "on " + compact(daysOfWeek, Field.DAY_OF_WEEK);
    } else {
      days = "every day";
    }
    String monthPart = isFull(months, Field.MONTH) ? "" : " in " + compact(months, Field.MONTH);
    if (singleTime) {
      sb.append(days).append(monthPart).append(String.format(Locale.ROOT, " at %02d:%02d:%02d",
          hours.nextSetBit(0), minutes.nextSetBit(0), seconds.nextSetBit(0)));
    } else {
      sb.append("at ").append(describeField(seconds, Field.SECONDS, "second"))
          .append(", ").append(describeField(minutes, Field.MINUTES, "minute"))
          .append(", ").append(describeField(hours, Field.HOURS, "hour"))
          .append(", ").append(days).append(monthPart);
    }
    return sb.toString();
  }

  private static String describeField(BitSet set, Field field, String unit) {
    return isFull(set, field) ? "every " + unit : unit + " " + compact(set, field);
  }

  /** "1-3,5,7" (or names for months and days of the week). */
  private static String compact(BitSet set, Field field) {
    List<String> parts = new ArrayList<>();
    int i = set.nextSetBit(field.min);
    while (i >= 0) {
      int end = i;
      while (set.get(end + 1)) {
        end++;
      }
      if (end >= i + 2) {
        parts.add(name(field, i) + "-" + name(field, end));
      } else {
        parts.add(name(field, i));
        if (end == i + 1) {
          parts.add(name(field, end));
        }
      }
      i = set.nextSetBit(end + 1);
    }
    return String.join(",", parts);
  }

  private static String name(Field field, int value) {
    return field.names == null ? Integer.toString(value) : field.names[value - field.min];
  }

  private static boolean isFull(BitSet set, Field field) {
    return set.cardinality() == field.max - field.min + 1;
  }

  private static BitSet full(Field field) {
    BitSet set = new BitSet(field.max + 1);
    set.set(field.min, field.max + 1);
    return set;
  }

  private static BitSet parseField(Field field, String text) {
    BitSet set = new BitSet(field.max + 1);
    for (String item : text.split(",", -1)) {
      parseItem(field, text, item, set);
    }
    return set;
  }

  private static void parseItem(Field field, String whole, String item, BitSet set) {
    if (item.isEmpty()) {
      throw error(field, whole, "empty list element");
    }
    String upper = item.toUpperCase(Locale.ROOT);
    if (upper.contains("#") || (field == Field.DAY_OF_MONTH || field == Field.DAY_OF_WEEK)
        && upper.matches("L|LW|L-\\d+|\\d+[LW]|[A-Z]{3}L")) {
      throw error(field, whole, "the Quartz extensions L, W and # are not supported");
    }
    String rangePart = item;
    int step = 1;
    int slash = item.indexOf('/');
    if (slash >= 0) {
      rangePart = item.substring(0, slash);
      String stepText = item.substring(slash + 1);
      step = parseNumber(field, whole, stepText, "step");
      if (step < 1 || step > field.max) {
        throw error(field, whole, "step " + stepText + " must be between 1 and " + field.max);
      }
    }
    int from;
    int to;
    if (rangePart.equals("?")) {
      throw error(field, whole, "'?' must stand alone");
    }
    if (rangePart.equals("*")) {
      from = field.min;
      to = field.max;
    } else {
      int dash = rangePart.indexOf('-');
      if (dash >= 0) {
        from = parseValue(field, whole, rangePart.substring(0, dash));
        to = parseValue(field, whole, rangePart.substring(dash + 1));
      } else {
        from = parseValue(field, whole, rangePart);
        // "a/n" runs from a to the end of the field, as in Quartz.
        to = slash >= 0 ? field.max : from;
      }
    }
    if (from <= to) {
      for (int v = from; v <= to; v += step) {
        set.set(v);
      }
    } else {
      // Wrapping range, e.g. 22-2 or FRI-MON: walk from 'from' to max then min to 'to'.
      int span = field.max - field.min + 1;
      int length = (to - from + span) % span;
      for (int k = 0; k <= length; k += step) {
        set.set(field.min + (from - field.min + k) % span);
      }
    }
  }

  private static int parseValue(Field field, String whole, String text) {
    if (text.isEmpty()) {
      throw error(field, whole, "missing value in range");
    }
    if (field.names != null && Character.isLetter(text.charAt(0))) {
      String upper = text.toUpperCase(Locale.ROOT);
      for (int i = 0; i < field.names.length; i++) {
        if (field.names[i].equals(upper)) {
          return field.min + i;
        }
      }
      throw error(field, whole, "unknown name \"" + text + "\"");
    }
    int v = parseNumber(field, whole, text, "value");
    if (v < field.min || v > field.max) {
      throw error(field, whole, "value " + v + " out of range");
    }
    return v;
  }

  private static int parseNumber(Field field, String whole, String text, String what) {
    if (!text.matches("\\d{1,4}")) {
      throw error(field, whole, "\"" + text + "\" is not a valid " + what);
    }
    return Integer.parseInt(text);
  }

  private static IllegalArgumentException error(Field field, String whole, String problem) {
    // The field is quoted with its personal data as placeholders: a policy's other values holding some
    // are refused without repeating them (trial t159: an e-mail address as day-of-week was echoed twice).
    io.otl.core.session.Desensitizer scanner = io.otl.core.session.Desensitizer.builtInScanner();
    return new IllegalArgumentException(field.label + " field \"" + scanner.apply(whole) + "\": "
        + scanner.apply(problem) + "; allowed: " + field.allowed() + ", with * ? , - /");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof CronSchedule other
        && seconds.equals(other.seconds) && minutes.equals(other.minutes)
        && hours.equals(other.hours) && daysOfMonth.equals(other.daysOfMonth)
        && months.equals(other.months) && daysOfWeek.equals(other.daysOfWeek)
        && domConstrained == other.domConstrained && dowConstrained == other.dowConstrained;
  }

  @Override
  public int hashCode() {
    return Objects.hash(seconds, minutes, hours, daysOfMonth, months, daysOfWeek,
        domConstrained, dowConstrained);
  }

  @Override
  public String toString() {
    return expression;
  }
}
