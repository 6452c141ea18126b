package io.otl.core.coordinator;

import io.otl.core.Ids;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.RewardUpdated;
import io.otl.core.coordinator.CoordinatorEvents.TrajectoryFiltered;
import io.otl.core.coordinator.CoordinatorEvents.TrajectoryPooled;
import io.otl.core.coordinator.CoordinatorProtocol.TrajectoryAvailable;
import io.otl.core.coordinator.CoordinatorReplies.Disposition;
import io.otl.core.coordinator.CoordinatorReplies.TrajectoryAck;
import io.otl.core.coordinator.CoordinatorState.SessionEntry;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.entity.Plan;
import java.time.Instant;
import java.util.List;
import java.util.Locale;

/**
 * Pure rules of the training pool: what a completed trajectory or a revised reward changes. Every
 * session is counted once, however often and in whatever order the read side sends it.
 */
final class PoolRules {
  private PoolRules() {}

  /**
   * Adds what one trajectory changes to the plan (judged against the plan's state so far).
   *
   * @param now when it is judged (the event time, and the fact time when the message has none)
   */
  static TrajectoryAck judge(Plan<State, Event> p, TrajectoryAvailable c, TrainingPolicy policy, Instant now) {
    String invalid = validate(c);
    if (invalid != null) {
      return new TrajectoryAck(c.sessionId(), Disposition.INVALID, invalid);
    }
    Instant factAt = c.completedAt() == null ? now : c.completedAt();
    Instant writtenAt = writtenAt(c, now);
    boolean eligible = c.qualityScore() >= policy.minQuality();
    SessionEntry entry = p.state().sessions().get(c.sessionId());
    Disposition d;
    String detail;
    if (entry == null && SessionForgetting.forgottenRepeat(p.state(), writtenAt, policy.feedbackWindow())) {
      // A redelivery of a session forgotten as used or filtered: counting it would count it twice.
      return new TrajectoryAck(c.sessionId(), Disposition.DUPLICATE, "already seen: written at " + writtenAt
          + ", before " + p.state().forgottenBefore().plus(policy.feedbackWindow())
          + " (sessions used or filtered before " + p.state().forgottenBefore() + " are no longer listed)");
    }
    if (entry == null || (entry.kind() == SessionEntry.Kind.FILTERED && c.revision() && eligible
        && isNewer(factAt, entry.at()))) {
      if (eligible) {
        List<String> msgIds = policy.backend() == Backend.TRINITY_PROXY ? responseIds(c.msgIds()) : List.of();
        p.add(new TrajectoryPooled(c.sessionId(), c.modelVersion(), c.reward(), c.qualityScore(),
            factAt, msgIds, now, c.recordedAt()));
        d = Disposition.POOLED;
        detail = entry == null ? "joined the pool" : "joined the pool after a revision raised its quality";
      } else {
        p.add(new TrajectoryFiltered(c.sessionId(), c.qualityScore(), factAt, now, c.recordedAt()));
        d = Disposition.FILTERED;
        detail = String.format(Locale.ROOT, "quality %.3f is below min-quality %.3f", c.qualityScore(),
            policy.minQuality());
      }
    } else if (entry.kind() == SessionEntry.Kind.POOLED && c.revision() && isNewer(factAt, entry.at())
        && (c.reward() != entry.reward() || c.qualityScore() != entry.quality())) {
      p.add(new RewardUpdated(c.sessionId(), c.reward(), c.qualityScore(), factAt, now, c.recordedAt()));
      d = Disposition.REWARD_UPDATED;
      detail = "reward revised";
    } else {
      d = Disposition.DUPLICATE;
      detail = switch (entry.kind()) {
        case USED -> "already used by a job";
        case FILTERED -> "already seen (filtered)";
        case POOLED -> "already in the pool";
      };
    }
    return new TrajectoryAck(c.sessionId(), d, detail);
  }

  /**
   * When the message's completion or revision was written (the server's clock): its {@code
   * recordedAt}, else its fact time, else {@code now}. Forgetting counts in these times.
   */
  static Instant writtenAt(TrajectoryAvailable c, Instant now) {
    return c.recordedAt() != null ? c.recordedAt() : c.completedAt() != null ? c.completedAt() : now;
  }

  /** trinity-proxy: a pooled trajectory's reward goes to the proxy (with the msgIds the proxy answered). */
  static boolean forwards(TrajectoryAck ack, TrajectoryAvailable c, TrainingPolicy policy) {
    return ack.disposition() == Disposition.POOLED && policy.backend() == Backend.TRINITY_PROXY
        && !responseIds(c.msgIds()).isEmpty();
  }

  /**
   * The msgIds that can name a proxy response: a blank one (an events-API message sent with {@code
   * "msgId": ""}, which is stored as sent) names none, and was forwarded as {@code "msg_ids": [""]}
   * beside the real ones, or alone (trial t77).
   */
  static List<String> responseIds(List<String> msgIds) {
    return msgIds.stream().anyMatch(id -> id == null || id.isBlank())
        ? msgIds.stream().filter(id -> id != null && !id.isBlank()).toList()
        : msgIds;
  }

  private static boolean isNewer(Instant candidate, Instant stored) {
    return stored == null || candidate.isAfter(stored);
  }

  static String validate(TrajectoryAvailable c) {
    if (!Ids.isValidSessionId(c.sessionId())) {
      return Ids.problem("sessionId", c.sessionId(), Ids.MAX_SESSION_ID);
    }
    if (!Double.isFinite(c.reward())) {
      return "reward must be a finite number, was " + c.reward();
    }
    if (!(c.qualityScore() >= 0 && c.qualityScore() <= 1)) {
      return "qualityScore must be in [0, 1], was " + c.qualityScore();
    }
    return null;
  }
}
