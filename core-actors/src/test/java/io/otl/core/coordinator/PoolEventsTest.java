package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.JobRequested;
import io.otl.core.coordinator.CoordinatorEvents.PolicyChanged;
import io.otl.core.coordinator.CoordinatorEvents.PreflightFailed;
import io.otl.core.coordinator.CoordinatorEvents.RewardForwarded;
import io.otl.core.coordinator.CoordinatorEvents.RewardUpdated;
import io.otl.core.coordinator.CoordinatorEvents.ScheduleArmed;
import io.otl.core.coordinator.CoordinatorEvents.ScheduledSlotFired;
import io.otl.core.coordinator.CoordinatorEvents.ScheduledSlotSkipped;
import io.otl.core.coordinator.CoordinatorEvents.TrajectoryFiltered;
import io.otl.core.coordinator.CoordinatorEvents.TrajectoryPooled;
import io.otl.core.coordinator.CoordinatorState.PendingReward;
import io.otl.core.coordinator.CoordinatorState.ScheduleState;
import io.otl.core.coordinator.CoordinatorState.SessionEntry;
import io.otl.core.coordinator.CoordinatorState.SessionEntry.Kind;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The pool and schedule half of {@link CoordinatorEventHandler}, on journals replayed from
 * {@link State#EMPTY}: counting once (package-info "Counting once"), the pool's mean quality, the
 * rewards still to forward (trinity-proxy) and the last handled schedule slot.
 */
class PoolEventsTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

  static TrajectoryPooled pooled(String id, double reward, double quality, Instant at, String... msgIds) {
    return new TrajectoryPooled(id, "v1", reward, quality, at, List.of(msgIds), at);
  }

  static State replay(Event... events) {
    return CoordinatorEventHandler.replay(List.of(events));
  }

  @Test
  void pooledTrajectoriesAreCountedOnceAndTheirMeanQualityIsKept() {
    State s = replay(pooled("s1", 0.5, 0.75, T0), pooled("s2", 1.0, 0.25, T0.plusSeconds(1)),
        pooled("s1", 0.9, 0.9, T0.plusSeconds(2)));
    assertEquals(2, s.poolSize());
    assertEquals(0.5, s.meanQuality(), 1e-12); // (0.75 + 0.25) / 2; the repeat of s1 changes nothing
    assertEquals(new SessionEntry(Kind.POOLED, 0.5, 0.75, T0), s.sessions().get("s1"));
    assertTrue(s.pendingRewards().isEmpty(), "ray-jobs trajectories carry no msgIds: nothing to forward");
    assertNull(State.EMPTY.meanQuality(), "no mean of an empty pool");
  }

  @Test
  void aFilteredTrajectoryIsRememberedButNeverCounted() {
    State s = replay(pooled("s1", 1.0, 0.8, T0), new TrajectoryFiltered("s2", 0.1, T0, T0));
    assertEquals(1, s.poolSize());
    assertEquals(0.8, s.meanQuality(), 1e-12);
    assertEquals(new SessionEntry(Kind.FILTERED, 0.0, 0.1, T0), s.sessions().get("s2"));
    assertEquals(List.of("s1"), s.poolSessionIds());
  }

  @Test
  void aRevisedRewardReplacesRewardAndQualityWithoutCountingAgain() {
    Instant revised = T0.plusSeconds(30);
    State s = replay(pooled("s1", 0.2, 0.6, T0, "m1", "m2"), pooled("s2", 0.0, 1.0, T0),
        new RewardUpdated("s1", 0.9, 0.8, revised, revised));
    assertEquals(2, s.poolSize());
    assertEquals(0.9, s.meanQuality(), 1e-12); // (0.8 + 1.0) / 2
    assertEquals(new SessionEntry(Kind.POOLED, 0.9, 0.8, revised), s.sessions().get("s1"));
    assertEquals(new PendingReward(List.of("m1", "m2"), 0.9), s.pendingRewards().get("s1"),
        "the reward still to forward is the revised one, for the same messages");
    assertNull(s.pendingRewards().get("s2"));
  }

  @Test
  void aRevisionOfASessionNotInThePoolChangesNothing() {
    State filtered = replay(new TrajectoryFiltered("s1", 0.1, T0, T0));
    assertSame(filtered, CoordinatorEventHandler.applyEvent(filtered, new RewardUpdated("s1", 1, 1, T0, T0)));
    assertSame(State.EMPTY, CoordinatorEventHandler.applyEvent(State.EMPTY, new RewardUpdated("x", 1, 1, T0, T0)));
  }

  @Test
  void aForwardedRewardIsNoLongerPending() {
    State s = replay(pooled("s1", 0.7, 0.9, T0, "m1"), pooled("s2", 0.3, 0.9, T0, "m2"));
    assertEquals(new PendingReward(List.of("m1"), 0.7), s.pendingRewards().get("s1"));
    State after = CoordinatorEventHandler.applyEvent(s, new RewardForwarded("s1", T0));
    assertFalse(after.pendingRewards().containsKey("s1"));
    assertTrue(after.pendingRewards().containsKey("s2"));
    assertEquals(2, after.poolSize(), "forwarding does not touch the pool");
  }

  @Test
  void thePoolIsOrderedOldestCompletionFirstTiesById() {
    State s = replay(pooled("c", 0, 1, T0.plusSeconds(5)), pooled("b", 0, 1, T0),
        pooled("a", 0, 1, T0), new TrajectoryPooled("z", "v1", 0, 1, null, List.of(), T0));
    assertEquals(List.of("z", "a", "b", "c"), s.poolSessionIds());
  }

  @Test
  void aJobTakesThePooledTrajectoriesAndAFailedPreflightGivesThemBack() {
    State pool = replay(pooled("s1", 1, 0.75, T0), pooled("s2", 1, 0.25, T0), new TrajectoryFiltered("f", 0.1, T0, T0));
    State taken = CoordinatorEventHandler.applyEvent(pool, new JobRequested("job-1-a", TriggerType.MANUAL, null,
        Backend.RAY_JOBS, "sft", "base", Map.of(), List.of("s1", "s2", "f"), T0));
    assertEquals(0, taken.poolSize());
    assertNull(taken.meanQuality());
    assertEquals(0.0, taken.poolQualitySum(), "an empty pool sums to exactly 0, whatever rounding left");
    assertEquals(Kind.USED, taken.sessions().get("s1").kind());
    assertEquals(Kind.FILTERED, taken.sessions().get("f").kind(), "a filtered session is never used");
    assertEquals("job-1-a", taken.activeJobId());

    State returned = CoordinatorEventHandler.applyEvent(taken,
        new PreflightFailed("job-1-a", List.of("base model is not set"), true, 3, T0));
    assertEquals(2, returned.poolSize());
    assertEquals(0.5, returned.meanQuality(), 1e-12);
    assertEquals(Kind.POOLED, returned.sessions().get("s2").kind());
    assertEquals(Kind.FILTERED, returned.sessions().get("f").kind());
    assertEquals(3, returned.thresholdRearmAt());
    assertNull(returned.activeJobId());

    State kept = CoordinatorEventHandler.applyEvent(taken,
        new PreflightFailed("job-1-a", List.of("the final PII scan found phone"), false, null, T0));
    assertEquals(0, kept.poolSize());
    assertEquals(Kind.USED, kept.sessions().get("s1").kind(), "PII: the trajectories stay with the failed job");
    assertNull(kept.activeJobId());
  }

  @Test
  void theScheduleKeepsItsLastHandledSlotAcrossARearm() {
    Instant slot1 = T0.plusSeconds(3600);
    Instant slot2 = T0.plusSeconds(7200);
    State armed = replay(new ScheduleArmed("0 0 * * * ?", "UTC", T0, T0));
    assertEquals(new ScheduleState("0 0 * * * ?", "UTC", T0, null), armed.schedule());
    assertEquals(T0, armed.schedule().base(), "before the first slot, slots after 'from' count");

    State fired = CoordinatorEventHandler.applyEvent(armed, new ScheduledSlotFired(slot1, false, "job-1-a", slot1));
    assertEquals(slot1, fired.schedule().lastSlot());
    assertEquals(slot1, fired.schedule().base());
    State skipped = CoordinatorEventHandler.applyEvent(fired, new ScheduledSlotSkipped(slot2, "pool empty", slot2));
    assertEquals(new ScheduleState("0 0 * * * ?", "UTC", T0, slot2), skipped.schedule());

    Instant rearmedFrom = T0.plusSeconds(10_000);
    State rearmed = CoordinatorEventHandler.applyEvent(skipped,
        new ScheduleArmed("0 30 * * * ?", "Europe/Paris", rearmedFrom, rearmedFrom));
    assertEquals(new ScheduleState("0 30 * * * ?", "Europe/Paris", rearmedFrom, slot2), rearmed.schedule());
    assertEquals(rearmedFrom, rearmed.schedule().base(), "a slot before the new 'from' no longer counts");
    assertEquals(slot2, new ScheduleState("c", "UTC", T0, slot2).base());
    assertEquals(T0, new ScheduleState("c", "UTC", T0, T0).base(), "a slot at 'from' itself is not after it");
  }

  @Test
  void aSlotHandledBeforeAnyArmingStartsTheScheduleThere() {
    Instant slot = T0.plusSeconds(60);
    State s = replay(new ScheduledSlotSkipped(slot, "pool empty", slot));
    assertEquals(new ScheduleState("", "UTC", slot, slot), s.schedule());
  }

  @Test
  void aPolicyChangeIsKeptWithItsOverrides() {
    PolicyChanged change = new PolicyChanged(Map.of("trigger.min-samples", 5), "ops", T0);
    State s = replay(pooled("s1", 1, 1, T0), change);
    assertSame(change, s.policyChange());
    assertEquals(1, s.poolSize());
  }

  @Test
  void anUnknownJobIsAnError() {
    assertThrows(IllegalStateException.class, () -> replay(
        new PreflightFailed("job-9-a", List.of("x"), true, null, T0)));
  }

  @Test
  void replayingThePoolIsTheSameAsApplyingOneEventAtATime() {
    List<Event> events = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      events.add(pooled("s" + i, i / 50.0, 0.5 + i / 100.0, T0.plusSeconds(i)));
    }
    State s = CoordinatorEventHandler.replay(events);
    assertEquals(50, s.poolSize());
    assertEquals(0.745, s.meanQuality(), 1e-9); // 0.5 + mean(i)/100, mean(0..49) = 24.5
    assertEquals(50, s.sessions().size());
  }
}
