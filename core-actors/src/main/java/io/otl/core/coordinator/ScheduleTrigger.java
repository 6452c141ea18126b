package io.otl.core.coordinator;

import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.ScheduleArmed;
import io.otl.core.coordinator.CoordinatorEvents.ScheduledSlotFired;
import io.otl.core.coordinator.CoordinatorEvents.ScheduledSlotSkipped;
import io.otl.core.coordinator.CoordinatorProtocol.ScheduleTick;
import io.otl.core.coordinator.CoordinatorState.Job;
import io.otl.core.coordinator.CoordinatorState.ScheduleState;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.MissedSlots;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import io.otl.core.entity.Plan;
import java.time.Instant;
import java.util.Optional;

/** The scheduled trigger's handlers: due slots fire a job or are skipped; one timer looks again. */
final class ScheduleTrigger {

  /** Starts a job in a plan (see {@code TrainingCoordinator.startJob}); answers its id. */
  @FunctionalInterface
  interface JobStarter {
    String start(Plan<State, Event> p, TriggerType trigger, String requestedBy);
  }

  static final String SCHEDULE_TIMER = "schedule";

  private final CoordinatorRuntime rt;
  private final JobStarter jobs;

  ScheduleTrigger(CoordinatorRuntime rt, JobStarter jobs) {
    this.rt = rt;
    this.jobs = jobs;
  }

  Plan<State, Event> onScheduleTick(State s) {
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    handleDueSlot(p, false);
    p.after(st -> {
      if (!rt.rollouts.slotAsking()) armTimer(st);
    });
    return p;
  }

  /**
   * Handles the latest due slot, if any. At start-up a due slot was missed while no node ran: it
   * fires once (missed-slots = fire) or is recorded as skipped; earlier missed slots are covered by
   * it (only the latest one is recorded).
   */
  void handleDueSlot(Plan<State, Event> p, boolean atStart) {
    TrainingPolicy policy = rt.policy;
    if (!ScheduleSlots.enabled(policy)) {
      return;
    }
    Instant now = rt.now();
    ScheduleState sc = p.state().schedule();
    if (ScheduleSlots.needsArming(sc, policy)) {
      p.add(new ScheduleArmed(policy.cron().expression(), policy.zone().getId(), now, now));
      return;
    }
    ScheduleSlots.Due due = ScheduleSlots.due(sc, policy, now);
    if (due == null) {
      return;
    }
    Instant latest = due.latest();
    if (atStart && policy.missedSlots() == MissedSlots.SKIP) {
      p.add(new ScheduledSlotSkipped(latest, "missed while no node ran (" + due.counted()
          + " slot(s), the latest at " + latest + "); missed-slots = skip", now));
      return;
    }
    boolean missed = atStart || due.count() > 1;
    if (rt.rollouts.enabled() && p.state().activeJobId() == null && p.state().poolSize() > 0) {
      // One rollout at a time: ask ModelVersion first (onSlotChecked fires or skips the slot).
      p.after(st -> rt.rollouts.askForSlot(latest, missed));
      return;
    }
    fireSlot(p, latest, missed, now);
  }

  /**
   * A run-time policy change that starts a schedule (a new cron or zone, or the scheduled trigger
   * turned on) records {@code ScheduleArmed(from = now)} with the change. Left to the next tick,
   * that tick would arm the schedule only then, from after the slot it woke for, and that first
   * slot was lost; turned off and on again, the old base would fire a "missed" slot at once.
   */
  void armOnPolicyChange(Plan<State, Event> p, TrainingPolicy before) {
    TrainingPolicy policy = rt.policy;
    if (!ScheduleSlots.enabled(policy)) {
      return;
    }
    if (ScheduleSlots.enabled(before) && !ScheduleSlots.needsArming(p.state().schedule(), policy)) {
      return;
    }
    Instant now = rt.now();
    p.add(new ScheduleArmed(policy.cron().expression(), policy.zone().getId(), now, now));
  }

  /** A due slot's rollout answer: skipped with the reason while a rollout is in progress, else fired. */
  Plan<State, Event> onSlotChecked(State s, RolloutChecked c) {
    rt.rollouts.slotAnswered();
    Plan<State, Event> p = new Plan<>(s, CoordinatorEventHandler::applyEvent);
    ScheduleState sc = s.schedule();
    boolean handled = sc != null && sc.lastSlot() != null && !c.slot().isAfter(sc.lastSlot());
    if (!handled) {
      String reason = c.preflightReason();
      if (reason != null) {
        rt.log().info("agent {}: scheduled slot {} skipped: {}", rt.agentId, c.slot(), reason);
        p.add(new ScheduledSlotSkipped(c.slot(), reason, rt.now()));
      } else {
        fireSlot(p, c.slot(), c.missed(), rt.now());
      }
    }
    p.after(this::armTimer);
    return p;
  }

  private void fireSlot(Plan<State, Event> p, Instant slot, boolean missed, Instant now) {
    State s = p.state();
    Optional<Job> active = s.activeJob();
    if (active.isPresent()) {
      p.add(new ScheduledSlotSkipped(slot, "job " + active.get().jobId() + " is " + active.get().status(), now));
    } else if (s.poolSize() == 0) {
      p.add(new ScheduledSlotSkipped(slot, "the pool is empty", now));
    } else {
      String jobId = JobIds.jobId(s.nextJobSeq(), rt.agentId);
      p.add(new ScheduledSlotFired(slot, missed, jobId, now));
      jobs.start(p, TriggerType.SCHEDULED, missed ? "schedule (missed slot " + slot + ")" : "schedule");
    }
  }

  /** The next slot still to be handled, or null (scheduled trigger off, or the cron never fires). */
  Instant nextScheduledRun(State s) {
    return ScheduleSlots.nextScheduledRun(s, rt.policy, rt.now());
  }

  void armTimer(State s) {
    Instant next = nextScheduledRun(s);
    if (next == null) {
      rt.timers.cancel(SCHEDULE_TIMER);
      return;
    }
    rt.timers.startSingleTimer(SCHEDULE_TIMER, ScheduleTick.INSTANCE, ScheduleSlots.timerDelay(rt.now(), next));
  }
}
