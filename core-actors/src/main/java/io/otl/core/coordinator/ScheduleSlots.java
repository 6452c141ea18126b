package io.otl.core.coordinator;

import io.otl.core.coordinator.CoordinatorState.ScheduleState;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;

/** Pure rules of the scheduled trigger: which cron slots are due, and when to look again. */
final class ScheduleSlots {
  private ScheduleSlots() {}

  /** Longest single timer delay; a later slot is reached by re-arming (robust to clock drift). */
  static final Duration MAX_TIMER_DELAY = Duration.ofHours(6);
  /** How many missed slots are walked one by one before jumping to the last day. */
  static final int MAX_SLOT_WALK = 10_000;

  /**
   * The latest due slot and how many were due since the last handled one.
   *
   * @param count at least {@link #MAX_SLOT_WALK} when the walk was cut short
   */
  record Due(Instant latest, int count) {
    String counted() {
      return count >= MAX_SLOT_WALK ? "at least " + count : String.valueOf(count);
    }
  }

  /** The scheduled trigger is on and has a cron expression. */
  static boolean enabled(TrainingPolicy policy) {
    return policy.isEnabled(TriggerType.SCHEDULED) && policy.cron() != null;
  }

  /** The schedule (re)starts when it never ran or its cron or zone changed: no "missed" slots then. */
  static boolean needsArming(ScheduleState sc, TrainingPolicy policy) {
    return sc == null || !sc.cron().equals(policy.cron().expression()) || !sc.zone().equals(policy.zone().getId());
  }

  /** The slots due at {@code now} after those {@code sc} handled; null when none is. */
  static Due due(ScheduleState sc, TrainingPolicy policy, Instant now) {
    Instant latest = null;
    int count = 0;
    Instant cursor = sc.base();
    while (true) {
      Instant next = nextSlot(policy, cursor);
      if (next == null || next.isAfter(now)) {
        break;
      }
      latest = next;
      count++;
      cursor = next;
      if (count == MAX_SLOT_WALK && cursor.isBefore(now.minus(Duration.ofDays(1)))) {
        cursor = now.minus(Duration.ofDays(1));
      }
    }
    return latest == null ? null : new Due(latest, count);
  }

  static Instant nextSlot(TrainingPolicy policy, Instant after) {
    return policy.cron().nextAfter(ZonedDateTime.ofInstant(after, policy.zone()))
        .map(ZonedDateTime::toInstant).orElse(null);
  }

  /** The next slot still to be handled, or null (scheduled trigger off, or the cron never fires). */
  static Instant nextScheduledRun(State s, TrainingPolicy policy, Instant now) {
    if (!enabled(policy)) {
      return null;
    }
    ScheduleState sc = s.schedule();
    Instant base = sc == null || !sc.cron().equals(policy.cron().expression()) ? now : sc.base();
    Instant next = nextSlot(policy, base);
    return next != null && !next.isAfter(now) ? nextSlot(policy, now) : next;
  }

  /** The timer's delay from {@code now} to {@code next}: at most {@link #MAX_TIMER_DELAY}, at least 1 ms. */
  static Duration timerDelay(Instant now, Instant next) {
    Duration delay = Duration.between(now, next);
    if (delay.compareTo(MAX_TIMER_DELAY) > 0) {
      delay = MAX_TIMER_DELAY;
    }
    if (delay.isNegative() || delay.isZero()) {
      delay = Duration.ofMillis(1);
    }
    return delay;
  }
}
