package io.otl.core.coordinator;

import io.otl.core.coordinator.CoordinatorEvents.SessionsForgotten;
import io.otl.core.coordinator.CoordinatorState.SessionEntry;
import io.otl.core.coordinator.CoordinatorState.State;
import java.time.Duration;
import java.time.Instant;

/**
 * Pure rules of forgetting used and filtered sessions, so that the coordinator's state (and every
 * snapshot of it) holds the pool and the recent past, not the agent's whole history.
 *
 * <p>A used or filtered entry only exists so that a repeat of its session is not counted again: a
 * second delivery of its completion, or a revision ({@code RewardRevised}). A session accepts a
 * revision until its feedback window closes, and the session decides that on the times it writes:
 * every message of a session is written at most {@code window} after its completion was. All times
 * here are those write times ({@code recordedAt}, the server's clock), never a client's.
 *
 * <p>The rule, with no wall clock: {@code newest} is the newest write time the trajectory feed has
 * delivered to this coordinator. The feed delivers in journal order, and nodes' clocks differ by less
 * than {@link #CLOCK_SKEW_MARGIN}, so every message not delivered yet was written after {@code newest
 * - margin}. Entries whose newest message was written before {@code before = newest - window -
 * margin} are forgotten: every message of such a session was written before {@code before + window =
 * newest - margin}, so all of them were delivered already. A message that comes again anyway (a
 * redelivery from an old offset) and names a session the coordinator no longer knows is a repeat when
 * it was written before {@code forgottenBefore + window}; a message never delivered was written after
 * that, so nothing new is ever taken for a repeat.
 */
final class SessionForgetting {
  private SessionForgetting() {}

  /** Clocks of the nodes that write sessions may differ by this much (and a write may take this long). */
  static final Duration CLOCK_SKEW_MARGIN = Duration.ofHours(1);

  /** A cutoff is looked for at most once per this much feed time (a scan of every entry). */
  static final Duration CHECK_EVERY = Duration.ofHours(1);

  /** The cutoff that {@code newest}, the newest write time delivered, allows. */
  static Instant cutoff(Instant newest, Duration window) {
    return newest.minus(window).minus(CLOCK_SKEW_MARGIN);
  }

  /**
   * Whether a message of a session {@code s} does not know, written at {@code writtenAt}, may be a
   * repeat of a forgotten one: then it is not counted.
   */
  static boolean forgottenRepeat(State s, Instant writtenAt, Duration window) {
    return s.forgottenBefore() != null && writtenAt.isBefore(s.forgottenBefore().plus(window));
  }

  /**
   * The event that forgets what {@code before} allows, or null when it would forget nothing. Nothing
   * while a job is active: a pre-flight that fails after its export gives the job's used sessions
   * back to the pool, so they must still be there.
   */
  static SessionsForgotten decide(State s, Instant before, Instant now) {
    if (s.activeJobId() != null || s.forgottenBefore() != null && !before.isAfter(s.forgottenBefore())) {
      return null;
    }
    int[] count = {0};
    s.sessions().forEach((id, e) -> {
      if (forgettable(e, before)) count[0]++;
    });
    return count[0] == 0 ? null : new SessionsForgotten(before, count[0], now);
  }

  /** A used or filtered entry whose newest message was written before {@code before}; never a pooled one. */
  static boolean forgettable(SessionEntry e, Instant before) {
    return e.kind() != SessionEntry.Kind.POOLED && e.writtenAt() != null && e.writtenAt().isBefore(before);
  }
}
