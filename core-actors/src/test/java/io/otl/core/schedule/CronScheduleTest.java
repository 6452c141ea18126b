package io.otl.core.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class CronScheduleTest {

  private static final ZoneId UTC = ZoneOffset.UTC;

  private static ZonedDateTime utc(int y, int mo, int d, int h, int mi, int s) {
    return ZonedDateTime.of(y, mo, d, h, mi, s, 0, UTC);
  }

  private static ZonedDateTime next(String expr, ZonedDateTime t) {
    return CronSchedule.parse(expr).nextAfter(t).orElseThrow();
  }

  @Test
  void dailyAtTwoFiresTheSameDayBeforeTwoAndTheNextDayAfter() {
    assertEquals(utc(2025, 3, 10, 2, 0, 0), next("0 0 2 * * ?", utc(2025, 3, 10, 1, 59, 59)));
    assertEquals(utc(2025, 3, 11, 2, 0, 0), next("0 0 2 * * ?", utc(2025, 3, 10, 2, 0, 0)));
    assertEquals(utc(2025, 3, 11, 2, 0, 0), next("0 0 2 * * ?", utc(2025, 3, 10, 2, 0, 0)
        .plusNanos(1)));
  }

  @Test
  void nextAfterIsStrictlyAfterAndIgnoresSubSeconds() {
    ZonedDateTime t = utc(2025, 1, 1, 0, 0, 5).plusNanos(500_000_000);
    assertEquals(utc(2025, 1, 1, 0, 0, 6), next("* * * * * ?", t));
  }

  @Test
  void crossesMonthAndYearBoundaries() {
    assertEquals(utc(2026, 1, 1, 2, 0, 0), next("0 0 2 * * ?", utc(2025, 12, 31, 3, 0, 0)));
    assertEquals(utc(2025, 2, 1, 0, 0, 0), next("0 0 0 1 * ?", utc(2025, 1, 15, 0, 0, 0)));
    // The 31st skips months that do not have one.
    assertEquals(utc(2025, 5, 31, 12, 0, 0), next("0 0 12 31 * ?", utc(2025, 4, 1, 0, 0, 0)));
  }

  @Test
  void leapDayIsFoundYearsAhead() {
    assertEquals(utc(2028, 2, 29, 0, 0, 0), next("0 0 0 29 2 ?", utc(2025, 3, 1, 0, 0, 0)));
  }

  @Test
  void impossibleDateNeverFires() {
    assertEquals(Optional.empty(),
        CronSchedule.parse("0 0 0 30 FEB ?").nextAfter(utc(2025, 1, 1, 0, 0, 0)));
  }

  @Test
  void dayOfWeekUsesQuartzNumbering() {
    // 2025-03-10 is a Monday. 1 = SUN, 2 = MON.
    ZonedDateTime sunday = utc(2025, 3, 9, 0, 0, 0);
    assertEquals(utc(2025, 3, 10, 9, 0, 0), next("0 0 9 ? * 2", sunday));
    assertEquals(utc(2025, 3, 10, 9, 0, 0), next("0 0 9 ? * MON-FRI", sunday));
    assertEquals(utc(2025, 3, 15, 9, 0, 0), next("0 0 9 ? * SAT", sunday));
    assertEquals(utc(2025, 3, 16, 9, 0, 0), next("0 0 9 ? * 1", sunday.plusHours(10)));
    // Friday evening: next of MON-FRI is Monday.
    assertEquals(utc(2025, 3, 17, 9, 0, 0), next("0 0 9 ? * mon-fri", utc(2025, 3, 14, 10, 0, 0)));
  }

  @Test
  void wrappingRangesStepsAndLists() {
    assertEquals(utc(2025, 3, 15, 9, 0, 0), next("0 0 9 ? * FRI-MON", utc(2025, 3, 14, 10, 0, 0)));
    assertEquals(utc(2025, 3, 10, 23, 0, 0), next("0 0 22-2 * * ?", utc(2025, 3, 10, 22, 30, 0)));
    assertEquals(utc(2025, 3, 11, 0, 0, 0), next("0 0 22-2 * * ?", utc(2025, 3, 10, 23, 30, 0)));
    assertEquals(utc(2025, 3, 10, 10, 15, 0), next("0 */15 * * * ?", utc(2025, 3, 10, 10, 0, 0)));
    assertEquals(utc(2025, 3, 10, 10, 5, 0), next("0 5/20 * * * ?", utc(2025, 3, 10, 10, 0, 0)));
    assertEquals(utc(2025, 3, 10, 10, 45, 0), next("0 5/20 * * * ?", utc(2025, 3, 10, 10, 25, 0)));
    assertEquals(utc(2025, 3, 10, 11, 5, 0), next("0 5/20 * * * ?", utc(2025, 3, 10, 10, 45, 0)));
    assertEquals(utc(2025, 3, 10, 10, 30, 30), next("30 0,30 10-12/2 * * ?",
        utc(2025, 3, 10, 10, 0, 30)));
    assertEquals(utc(2025, 3, 10, 12, 0, 30), next("30 0,30 10-12/2 * * ?",
        utc(2025, 3, 10, 10, 30, 30)));
    assertEquals(utc(2025, 7, 1, 0, 0, 0), next("0 0 0 1 JAN,JUL ?", utc(2025, 1, 1, 0, 0, 0)));
  }

  @Test
  void questionMarkAndStarBothMeanNoDayConstraint() {
    assertEquals(utc(2025, 3, 11, 2, 0, 0), next("0 0 2 ? * *", utc(2025, 3, 10, 3, 0, 0)));
    assertEquals(utc(2025, 3, 11, 2, 0, 0), next("0 0 2 * * *", utc(2025, 3, 10, 3, 0, 0)));
  }

  @Test
  void keepsTheZoneAndSkipsTheRepeatedHourAtFallBack() {
    ZoneId berlin = ZoneId.of("Europe/Berlin");
    // 2025-10-26 02:00-03:00 happens twice in Berlin; a 02:30 slot fires once.
    ZonedDateTime before = ZonedDateTime.of(2025, 10, 26, 0, 0, 0, 0, berlin);
    ZonedDateTime first = next("0 30 2 * * ?", before);
    assertEquals(2, first.getHour());
    assertEquals(berlin, first.getZone());
    ZonedDateTime second = next("0 30 2 * * ?", first);
    assertEquals(ZonedDateTime.of(2025, 10, 27, 2, 30, 0, 0, berlin), second);
  }

  @Test
  void everyMinuteDuringTheRepeatedHourStillMovesForward() {
    ZoneId berlin = ZoneId.of("Europe/Berlin");
    ZonedDateTime laterTwoTen = ZonedDateTime.of(2025, 10, 26, 2, 10, 0, 0, berlin)
        .withLaterOffsetAtOverlap();
    ZonedDateTime n = next("0 * * * * ?", laterTwoTen);
    assertTrue(n.isAfter(laterTwoTen));
  }

  @Test
  void aSlotInTheSpringForwardGapFiresOnce() {
    ZoneId berlin = ZoneId.of("Europe/Berlin");
    // 2025-03-30 02:00-03:00 does not exist in Berlin.
    ZonedDateTime n = next("0 30 2 * * ?", ZonedDateTime.of(2025, 3, 30, 0, 0, 0, 0, berlin));
    assertEquals(ZonedDateTime.of(2025, 3, 30, 3, 30, 0, 0, berlin), n);
    assertEquals(ZonedDateTime.of(2025, 3, 31, 2, 30, 0, 0, berlin), next("0 30 2 * * ?", n));
  }

  @Test
  void describesCommonExpressions() {
    assertEquals("every day at 02:00:00", CronSchedule.parse("0 0 2 * * ?").describe());
    assertEquals("on MON-FRI at 09:30:00", CronSchedule.parse("0 30 9 ? * MON-FRI").describe());
    assertEquals("at second 0, minute 0,15,30,45, every hour, every day",
        CronSchedule.parse("0 */15 * * * ?").describe());
    assertEquals("at second 0, minute 0,15,30,45, hour 9-17, on MON-FRI",
        CronSchedule.parse("0 0/15 9-17 ? * MON-FRI").describe());
    assertEquals("at every second, minute 5, hour 1,2, every day",
        CronSchedule.parse("* 5 1,2 * * ?").describe());
    assertEquals("on day 1 of the month in JAN,JUL at 00:00:00",
        CronSchedule.parse("0 0 0 1 1,7 ?").describe());
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "", "0 0 2 * *", "0 0 2 * * ? 2025", "60 0 2 * * ?", "0 60 2 * * ?", "0 0 24 * * ?",
      "0 0 2 32 * ?", "0 0 2 0 * ?", "0 0 2 * 13 ?", "0 0 2 ? * 0", "0 0 2 ? * 8",
      "0 0 2 ? * FUN", "0 0 2 * FOO ?", "0 0 2 1 * MON", "? 0 2 * * *", "0 0 2 L * ?",
      "0 0 2 ? * 6#3", "0 0 2 15W * ?", "0 */0 * * * ?", "0 0 2 * * ?,1", "0 a 2 * * ?",
      "0 1-2-3 * * ?", "0 0 2 * * ? ?", "0 0,,1 2 * * ?", "0 0 2 * * 5L"})
  void rejectsInvalidExpressions(String expr) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> CronSchedule.parse(expr));
    assertTrue(e.getMessage() != null && !e.getMessage().isBlank());
  }

  @Test
  void errorMessagesNameTheFieldAndTheRange() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> CronSchedule.parse("0 0 25 * * ?"));
    assertTrue(e.getMessage().contains("hours"), e.getMessage());
    assertTrue(e.getMessage().contains("0-23"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> CronSchedule.parse("0 0 2 * *"));
    assertTrue(e.getMessage().contains("expected 6"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> CronSchedule.parse("0 0 2 1 * MON"));
    assertTrue(e.getMessage().contains("'?'"), e.getMessage());
  }

  /**
   * Spring's @Scheduled, the cron AgentScope Java users write, reads 1-5 as MON-FRI; here it is SUN-THU.
   * The schedule says which days its numbers name, so the node can tell whoever configured it.
   */
  @Test
  void dayOfWeekNumbersAreNamedBecauseSpringCountsThemOneDayOff() {
    assertEquals(Optional.of("SUN-THU"), CronSchedule.parse("0 0 2 * * 1-5").daysOfWeekGivenByNumber());
    assertEquals(Optional.of("SAT"), CronSchedule.parse("0 0 2 ? * 7").daysOfWeekGivenByNumber());
    assertEquals(Optional.of("SUN,MON"), CronSchedule.parse("0 0 2 ? * 1,MON").daysOfWeekGivenByNumber());
    assertEquals(Optional.empty(), CronSchedule.parse("0 0 2 ? * MON-FRI").daysOfWeekGivenByNumber());
    assertEquals(Optional.empty(), CronSchedule.parse("0 0 2 ? * */2").daysOfWeekGivenByNumber(), "a step is no day");
    assertEquals(Optional.empty(), CronSchedule.parse("0 0 2 1 * ?").daysOfWeekGivenByNumber());
    assertEquals(Optional.empty(), CronSchedule.parse("0 0 2 * * ?").daysOfWeekGivenByNumber());
  }

  @Test
  void equalSchedulesFromDifferentSpellings() {
    assertEquals(CronSchedule.parse("0 0 2 ? * MON-FRI"), CronSchedule.parse("0 0 2 ? * 2-6"));
    assertEquals("0 0 2 * * ?", CronSchedule.parse("  0 0 2 * * ?  ").expression());
  }
}
