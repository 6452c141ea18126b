package io.otl.core.coordinator;

import io.otl.core.coordinator.CoordinatorProtocol.Command;
import io.otl.core.coordinator.CoordinatorReplies.TriggerReply;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pre-flight item "no rollout in progress" (one rollout at a time). The manual trigger asks
 * and fails its pre-flight with the reason; the threshold asks and, while a rollout is in
 * progress, waits without a job: the next trajectory (the canary's traffic produces them) asks
 * again. At most one threshold question is in flight. Nothing here is persisted: the answer is
 * ModelVersion's state at the time of asking.
 */
final class RolloutGate {
  private static final Logger log = LoggerFactory.getLogger(RolloutGate.class);

  private final String agentId;
  private final RolloutProbe probe;
  private final ActorContext<Command> ctx;
  private boolean thresholdAsking;
  private boolean slotAsking;
  private String lastWaitedFor;
  /** Why the threshold waits, from its last answer (null once it may start): the training view shows it. */
  private String waitingFor;

  RolloutGate(String agentId, RolloutProbe probe, ActorContext<Command> ctx) {
    this.agentId = agentId;
    this.probe = probe;
    this.ctx = ctx;
  }

  boolean enabled() {
    return probe != RolloutProbe.NONE;
  }

  void ask(TriggerType trigger, String requestedBy, ActorRef<TriggerReply> replyTo) {
    if (trigger == TriggerType.THRESHOLD) {
      if (thresholdAsking) return;
      thresholdAsking = true;
    }
    ask(trigger, requestedBy, replyTo, null, false);
  }

  /**
   * A due scheduled slot asks before it fires; the schedule timer is re-armed once the answer is
   * handled, so a slot waiting on ModelVersion is neither fired twice nor polled.
   */
  void askForSlot(java.time.Instant slot, boolean missed) {
    if (slotAsking) return;
    slotAsking = true;
    ask(TriggerType.SCHEDULED, "schedule", null, slot, missed);
  }

  /** Called with the slot's answer: the next due slot may ask again. */
  void slotAnswered() {
    slotAsking = false;
  }

  boolean slotAsking() {
    return slotAsking;
  }

  private void ask(TriggerType trigger, String requestedBy, ActorRef<TriggerReply> replyTo,
      java.time.Instant slot, boolean missed) {
    CompletionStage<Optional<String>> stage = PortCalls.call(() -> probe.rolloutInProgress(agentId));
    ctx.pipeToSelf(stage, (rollout, error) -> new RolloutChecked(trigger, requestedBy,
        error == null && rollout != null ? rollout.orElse(null) : null,
        error == null ? (rollout == null ? "no answer" : null) : describe(error), replyTo, slot, missed));
  }

  /** For a threshold answer: true when the job may start; otherwise logs (once per rollout) that it waits. */
  boolean thresholdMayStart(RolloutChecked c) {
    thresholdAsking = false;
    String reason = c.preflightReason();
    if (reason == null) {
      lastWaitedFor = null;
      waitingFor = null;
      return true;
    }
    String what = c.rollout() != null ? c.rollout() : "unknown";
    waitingFor = c.rollout() != null ? "rollout of " + c.rollout() : "the rollout check: ModelVersion did not answer";
    if (!Objects.equals(what, lastWaitedFor)) {
      lastWaitedFor = what;
      log.info("Training of agent {}: the threshold is reached but waits: {}", agentId, reason);
    }
    return false;
  }

  /**
   * Why a threshold that is due starts no job, as of its last answer ("rollout of v3 is CANARY"),
   * or null when it was not held back. The next trajectory asks again.
   */
  String waitingFor() {
    return waitingFor;
  }

  private static String describe(Throwable t) {
    Throwable c = PortCalls.unwrap(t);
    return c.getClass().getSimpleName() + (c.getMessage() == null ? "" : ": " + c.getMessage());
  }
}
