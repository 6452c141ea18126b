package io.otl.core.coordinator;

import static io.otl.core.coordinator.StepsHarness.NOW;
import static io.otl.core.coordinator.StepsHarness.persisted;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.JobRequested;
import io.otl.core.coordinator.CoordinatorEvents.ScheduleArmed;
import io.otl.core.coordinator.CoordinatorEvents.ScheduledSlotFired;
import io.otl.core.coordinator.CoordinatorEvents.ScheduledSlotSkipped;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import io.otl.core.entity.Plan;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * {@link ScheduleTrigger} (package-info "Scheduled"): a new or changed schedule is armed from now,
 * a due slot fires a job or is skipped with a reason, a slot missed while no node ran fires once
 * late or is skipped (missed-slots), a rollout in progress skips the slot, and one timer looks
 * again at the next slot. The clock stands at 12:00 UTC; the cron fires every hour.
 */
class ScheduleTriggerStepsTest {
  static final String HOURLY = "0 0 * * * ?";
  static final String SCHEDULED = "trigger { type = scheduled, cron = \"" + HOURLY + "\" }";

  /** What the job starter was asked, as "trigger by". */
  final List<String> started = new ArrayList<>();

  ScheduleTrigger trigger(StepsHarness h) {
    return new ScheduleTrigger(h.rt, (p, trigger, by) -> {
      started.add(trigger.configName() + " by " + by);
      String id = JobIds.jobId(p.state().nextJobSeq(), "a");
      p.add(new JobRequested(id, trigger, by, Backend.RAY_JOBS, "sft", "base", Map.of(), p.state().poolSessionIds(), NOW));
      return id;
    });
  }

  /** Armed at {@code from}, with {@code pooled} trajectories in the pool. */
  static State armed(Instant from, int pooled) {
    List<Event> events = new ArrayList<>();
    events.add(new ScheduleArmed(HOURLY, "UTC", from, from));
    for (int i = 0; i < pooled; i++) {
      events.add(PoolEventsTest.pooled("s" + i, 1, 1, from));
    }
    return CoordinatorEventHandler.replay(events);
  }

  static Plan<State, Event> plan(State s) {
    return new Plan<>(s, CoordinatorEventHandler::applyEvent);
  }

  @Test
  void aNewOrChangedScheduleIsArmedFromNow() {
    StepsHarness h = new StepsHarness(SCHEDULED + ", trigger.zone = Europe/Paris");
    Plan<State, Event> p = plan(State.EMPTY);
    trigger(h).handleDueSlot(p, true);
    assertEquals(List.of(new ScheduleArmed(HOURLY, "Europe/Paris", NOW, NOW)), p.events());
    Plan<State, Event> changedZone = plan(armed(NOW.minusSeconds(7200), 1));
    trigger(h).handleDueSlot(changedZone, false);
    assertEquals(List.of(new ScheduleArmed(HOURLY, "Europe/Paris", NOW, NOW)), changedZone.events(),
        "no missed slots from before the change");

    Plan<State, Event> off = plan(State.EMPTY);
    trigger(new StepsHarness("")).handleDueSlot(off, true);
    assertTrue(off.isEmpty(), "the scheduled trigger is off by default");
  }

  @Test
  void aDueSlotFiresAJob() {
    StepsHarness h = new StepsHarness(SCHEDULED);
    Plan<State, Event> p = persisted(trigger(h).onScheduleTick(armed(NOW.minusSeconds(1800), 2)));
    assertEquals(new ScheduledSlotFired(NOW, false, "job-1-a", NOW), p.events().get(0));
    assertEquals(List.of("scheduled by schedule"), started);
    assertEquals(List.of("schedule after PT1H: ScheduleTick"), h.timers(), "armed for 13:00");
  }

  @Test
  void severalDueSlotsFireOnceAsMissed() {
    StepsHarness h = new StepsHarness(SCHEDULED);
    Plan<State, Event> p = plan(armed(NOW.minusSeconds(3 * 3600 + 60), 1));
    trigger(h).handleDueSlot(p, false);
    assertEquals(new ScheduledSlotFired(NOW, true, "job-1-a", NOW), p.events().get(0));
    assertEquals(List.of("scheduled by schedule (missed slot 2026-01-01T12:00:00Z)"), started);
  }

  @Test
  void aSlotIsSkippedWhenThePoolIsEmptyOrAJobIsActive() {
    StepsHarness h = new StepsHarness(SCHEDULED);
    Plan<State, Event> empty = plan(armed(NOW.minusSeconds(1800), 0));
    trigger(h).handleDueSlot(empty, false);
    assertEquals(List.of(new ScheduledSlotSkipped(NOW, "the pool is empty", NOW)), empty.events());
    State busy = CoordinatorEventHandler.applyEvent(armed(NOW.minusSeconds(1800), 1),
        JobEventsTest.requested("job-1-a", Backend.RAY_JOBS, "s0"));
    Plan<State, Event> p = plan(busy);
    trigger(h).handleDueSlot(p, false);
    assertEquals(List.of(new ScheduledSlotSkipped(NOW, "job job-1-a is REQUESTED", NOW)), p.events());
    assertEquals(List.of(), started);
    Plan<State, Event> notYet = plan(armed(NOW, 1));
    trigger(h).handleDueSlot(notYet, false);
    assertTrue(notYet.isEmpty(), "the 12:00 slot is not after 'from': the next one is 13:00");
  }

  @Test
  void slotsMissedWhileNoNodeRanFireOnceOrAreSkipped() {
    Plan<State, Event> fire = plan(armed(NOW.minusSeconds(3 * 3600 + 60), 1));
    trigger(new StepsHarness(SCHEDULED)).handleDueSlot(fire, true);
    assertEquals(new ScheduledSlotFired(NOW, true, "job-1-a", NOW), fire.events().get(0));

    Plan<State, Event> skip = plan(armed(NOW.minusSeconds(3 * 3600 + 60), 1));
    trigger(new StepsHarness(SCHEDULED + ", trigger.missed-slots = skip")).handleDueSlot(skip, true);
    assertEquals(List.of(new ScheduledSlotSkipped(NOW, "missed while no node ran (4 slot(s), the latest at "
        + "2026-01-01T12:00:00Z); missed-slots = skip", NOW)), skip.events());
  }

  @Test
  void aRolloutInProgressIsAskedAboutAndSkipsTheSlot() {
    StepsHarness h = new StepsHarness(SCHEDULED,
        agent -> CompletableFuture.completedFuture(Optional.of("v3 is CANARY")));
    ScheduleTrigger t = trigger(h);
    Plan<State, Event> p = persisted(t.onScheduleTick(armed(NOW.minusSeconds(1800), 1)));
    assertTrue(p.isEmpty());
    RolloutChecked asked = (RolloutChecked) h.piped().get(0);
    assertEquals(new RolloutChecked(TriggerType.SCHEDULED, "schedule", "v3 is CANARY", null, null, NOW, false), asked);
    assertEquals(List.of(), h.timers(), "the timer waits for the answer");

    Plan<State, Event> answered = persisted(t.onSlotChecked(armed(NOW.minusSeconds(1800), 1), asked));
    assertEquals(List.of(new ScheduledSlotSkipped(NOW, asked.preflightReason(), NOW)), answered.events());
    assertEquals(List.of("schedule after PT1H: ScheduleTick"), h.timers());

    RolloutChecked none = new RolloutChecked(TriggerType.SCHEDULED, "schedule", null, null, null, NOW, true);
    Plan<State, Event> fired = t.onSlotChecked(armed(NOW.minusSeconds(1800), 1), none);
    assertEquals(new ScheduledSlotFired(NOW, true, "job-1-a", NOW), fired.events().get(0));
    assertTrue(t.onSlotChecked(answered.state(), none).events().isEmpty(), "a slot handled already");
  }

  @Test
  void theTimerAimsAtTheNextSlotAndStopsWhenTheScheduleIsOff() {
    StepsHarness h = new StepsHarness(SCHEDULED);
    h.clock.set(NOW.plusSeconds(600));
    trigger(h).armTimer(armed(NOW, 0));
    assertEquals(List.of("schedule after PT50M: ScheduleTick"), h.timers());
    assertEquals(NOW.plusSeconds(3600), trigger(h).nextScheduledRun(armed(NOW, 0)));

    h.rt.policy = StepsHarness.policy(""); // the scheduled trigger turned off at run time
    assertNull(trigger(h).nextScheduledRun(armed(NOW, 0)));
    trigger(h).armTimer(armed(NOW, 0));
    assertEquals(List.of("cancel schedule"), h.timers());
  }
}
