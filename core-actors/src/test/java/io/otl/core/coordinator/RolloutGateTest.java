package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * {@link RolloutGate}, the pre-flight item "no rollout in progress" (one rollout at a time): at
 * most one threshold question and one slot question in flight, a probe that does not answer
 * counts as "cannot tell", and only "nothing rolls out" lets the threshold start a job.
 */
class RolloutGateTest {
  /** ModelVersion's answers, in order; the agents asked about are recorded. */
  final List<CompletionStage<Optional<String>>> answers = new ArrayList<>();
  final List<String> asked = new ArrayList<>();

  StepsHarness harness() {
    return new StepsHarness("", agent -> {
      asked.add(agent);
      return answers.remove(0);
    });
  }

  @Test
  void noProbeMeansNoQuestion() {
    assertFalse(new StepsHarness("").rt.rollouts.enabled());
    assertTrue(harness().rt.rollouts.enabled());
  }

  @Test
  void theThresholdAsksOnceUntilAnswered() {
    StepsHarness h = harness();
    answers.add(CompletableFuture.completedFuture(Optional.of("v3 is CANARY")));
    answers.add(CompletableFuture.completedFuture(Optional.empty()));
    h.rt.rollouts.ask(TriggerType.THRESHOLD, "threshold", null);
    h.rt.rollouts.ask(TriggerType.THRESHOLD, "threshold", null);
    assertEquals(List.of("a"), asked);
    RolloutChecked busy = (RolloutChecked) h.piped().get(0);
    assertEquals(new RolloutChecked(TriggerType.THRESHOLD, "threshold", "v3 is CANARY", null, null), busy);
    assertEquals("a rollout is in progress: v3 is CANARY; one rollout at a time, train again once it is promoted or "
        + "rolled back", busy.preflightReason());
    assertFalse(h.rt.rollouts.thresholdMayStart(busy));

    h.rt.rollouts.ask(TriggerType.THRESHOLD, "threshold", null);
    RolloutChecked free = (RolloutChecked) h.piped().get(0);
    assertNull(free.preflightReason());
    assertTrue(h.rt.rollouts.thresholdMayStart(free));
  }

  @Test
  void aManualTriggerAlwaysAsksAndAProbeThatFailsCannotTell() {
    StepsHarness h = harness();
    answers.add(CompletableFuture.failedFuture(new IllegalStateException("ask timed out")));
    answers.add(CompletableFuture.completedFuture(null));
    h.rt.rollouts.ask(TriggerType.MANUAL, "alice", null);
    h.rt.rollouts.ask(TriggerType.MANUAL, "alice", null);
    List<CoordinatorProtocol.Command> got = h.piped();
    RolloutChecked failed = (RolloutChecked) got.get(0);
    assertEquals("IllegalStateException: ask timed out", failed.error());
    assertNull(failed.rollout());
    assertEquals("cannot tell whether a rollout is in progress: ModelVersion did not answer (IllegalStateException: ask timed out)",
        failed.preflightReason());
    assertEquals("no answer", ((RolloutChecked) got.get(1)).error());
    assertFalse(h.rt.rollouts.thresholdMayStart(failed));
  }

  @Test
  void aSlotAsksOnceUntilItsAnswerIsHandled() {
    StepsHarness h = harness();
    answers.add(CompletableFuture.completedFuture(Optional.empty()));
    answers.add(CompletableFuture.completedFuture(Optional.empty()));
    h.rt.rollouts.askForSlot(StepsHarness.NOW, true);
    h.rt.rollouts.askForSlot(StepsHarness.NOW, true);
    assertTrue(h.rt.rollouts.slotAsking());
    assertEquals(1, asked.size());
    assertEquals(new RolloutChecked(TriggerType.SCHEDULED, "schedule", null, null, null, StepsHarness.NOW, true),
        h.piped().get(0));
    h.rt.rollouts.slotAnswered();
    assertFalse(h.rt.rollouts.slotAsking());
    h.rt.rollouts.askForSlot(StepsHarness.NOW, false);
    assertEquals(2, asked.size());
  }
}
