package io.otl.core.session;

import io.otl.core.session.AgentSession.FeedbackRecorded;
import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.SessionModel.Outcome;
import io.otl.core.session.SessionModel.Role;
import io.otl.core.session.SessionSettings.RewardWeights;

/**
 * Reward and quality of a trajectory (design §3.1.1). Pure functions of the state, so replaying
 * the journal reproduces every figure exactly.
 */
public final class Scoring {
  private Scoring() {}

  /**
   * The task result's weight plus every feedback's weight (a rating contributes
   * {@code weight * (value - 3) / 2}), clipped to [-1, 1].
   */
  public static double reward(State state, RewardWeights w) {
    double sum = 0;
    if (state.result() != null) {
      sum += switch (state.result().status()) {
        case SUCCESS -> w.success();
        case FAILURE -> w.failure();
        case TIMEOUT -> w.timeout();
      };
    }
    for (FeedbackRecorded f : state.feedback()) sum += weight(f, w);
    return Math.max(-1, Math.min(1, sum));
  }

  /** What one feedback adds to a reward (a rating: {@code weight * (value - 3) / 2}). */
  public static double weight(FeedbackRecorded f, RewardWeights w) {
    return switch (f.kind()) {
      case THUMBS_UP -> w.thumbsUp();
      case THUMBS_DOWN -> w.thumbsDown();
      case RATING -> w.rating() * (f.value() - 3) / 2;
      case ADOPTED -> w.adopted();
      case REPEATED_QUESTION -> w.repeatedQuestion();
      case HUMAN_HANDOFF -> w.humanHandoff();
    };
  }

  /**
   * Per-turn rewards: for each response that feedback names by {@code msgId}, the sum of that
   * feedback's weights, clipped to [-1, 1]. Responses nobody rated are absent.
   */
  public static java.util.Map<String, Double> turnRewards(State state, RewardWeights w) {
    java.util.Map<String, Double> sums = new java.util.LinkedHashMap<>();
    for (FeedbackRecorded f : state.feedback()) {
      if (f.msgId() != null) sums.merge(f.msgId(), weight(f, w), Double::sum);
    }
    sums.replaceAll((id, v) -> Math.max(-1, Math.min(1, v)));
    return sums;
  }

  /**
   * Completeness in [0, 1], a fifth for each of: a user turn, an assistant turn, a task result,
   * explicit feedback, and no tool error left unexplained (a failed tool call not followed by an
   * assistant message or a reasoning step).
   */
  public static double quality(State state) {
    int met = 0;
    if (state.messages().stream().anyMatch(m -> m.role() == Role.user)) met++;
    if (state.messages().stream().anyMatch(m -> m.role() == Role.assistant)) met++;
    if (state.result() != null) met++;
    if (!state.feedback().isEmpty()) met++;
    if (state.unexplainedToolErrors() == 0) met++;
    return met / 5.0;
  }

  public static Outcome outcome(State state) {
    int up = 0;
    int down = 0;
    int ratings = 0;
    double ratingSum = 0;
    for (FeedbackRecorded f : state.feedback()) {
      switch (f.kind()) {
        case THUMBS_UP -> up++;
        case THUMBS_DOWN -> down++;
        case RATING -> {
          ratings++;
          ratingSum += f.value();
        }
        default -> { }
      }
    }
    double[] latencies = state.messages().stream()
        .filter(m -> m.role() == Role.assistant && m.latencyMs() != null)
        .mapToDouble(MessageRecorded::latencyMs)
        .sorted()
        .toArray();
    // Guardrail figures from the gateway's record of each model call (InferenceCall): a call
    // failed upstream when it has an error or was answered by the stable after the session's
    // version failed (fallbackFrom). Tokens only when the upstream reported usage.
    int calls = 0;
    int errors = 0;
    long tokens = 0;
    boolean tokensKnown = false;
    for (MessageRecorded m : state.messages()) {
      InferenceCall call = m.inference();
      if (call == null) continue;
      calls++;
      if (call.error() != null || call.fallbackFrom() != null) errors++;
      if (call.promptTokens() != null || call.completionTokens() != null) {
        tokensKnown = true;
        tokens += (call.promptTokens() == null ? 0 : call.promptTokens())
            + (call.completionTokens() == null ? 0 : call.completionTokens());
      }
    }
    return new Outcome(state.result() == null ? null : state.result().status(),
        ratings == 0 ? null : ratingSum / ratings, ratings, up, down, percentile(latencies, 0.95),
        calls == 0 ? null : calls, calls == 0 ? null : errors, tokensKnown ? tokens : null, state.startedAt());
  }

  /** Nearest-rank percentile of sorted values; null for none. */
  static Double percentile(double[] sorted, double p) {
    if (sorted.length == 0) return null;
    int rank = (int) Math.ceil(p * sorted.length);
    return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
  }
}
