package io.otl.core.coordinator;

import io.otl.core.coordinator.CoordinatorReplies.TriggerReply;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import org.apache.pekko.actor.typed.ActorRef;

/**
 * The {@link RolloutProbe}'s answer for a trigger that waits on it (not persisted).
 *
 * @param rollout what is rolling out ("v3 is CANARY"), null when nothing is
 * @param error why the probe did not answer, null when it did
 * @param replyTo the manual trigger's caller, null for the threshold
 * @param slot the scheduled slot that waits on the answer, null for the other triggers
 * @param missed whether that slot was missed (fires late)
 */
public record RolloutChecked(
    TriggerType trigger, String requestedBy, String rollout, String error, ActorRef<TriggerReply> replyTo,
    java.time.Instant slot, boolean missed)
    implements CoordinatorProtocol.Internal {

  public RolloutChecked(
      TriggerType trigger, String requestedBy, String rollout, String error, ActorRef<TriggerReply> replyTo) {
    this(trigger, requestedBy, rollout, error, replyTo, null, false);
  }

  /**
   * The failed pre-flight item "no rollout in progress", or null when it passes. Worded as what was found
   * ("a rollout is in progress: v3 is CANARY"): the item's name before it read as the opposite to a user.
   */
  String preflightReason() {
    if (error != null) {
      return "cannot tell whether a rollout is in progress: ModelVersion did not answer (" + error + ")";
    }
    return rollout == null ? null
        : "a rollout is in progress: " + rollout + "; one rollout at a time, train again once it is promoted or rolled back";
  }
}
