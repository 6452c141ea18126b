package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.session.AgentSession.FeedbackRecorded;
import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.AgentSession.TaskResultRecorded;
import io.otl.core.session.AgentSession.ToolCallRecorded;
import io.otl.core.session.SessionModel.FeedbackKind;
import io.otl.core.session.SessionModel.Role;
import io.otl.core.session.SessionModel.TaskStatus;
import io.otl.core.session.SessionSettings.RewardWeights;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Reward, per-turn rewards and quality as design §3.1.1 defines them. */
class ScoringRewardTest {
  private static final Instant T = Instant.parse("2026-11-20T02:00:00Z");
  /** Weights that differ from each other, so a kind read with another kind's weight shows. */
  private static final RewardWeights W = new RewardWeights(0.5, -0.25, 4, 0.125, -0.0625, -0.03125, 0.75, -0.875, -0.375);
  private int n;

  private FeedbackRecorded fb(FeedbackKind kind, Double value, String msgId) {
    return new FeedbackRecorded("f" + n, T, T, "f" + n++, kind, value, null, msgId);
  }

  private static State withResult(TaskStatus status) {
    return State.empty().apply(new TaskResultRecorded("r", T, T, status, null));
  }

  @Test
  void eachFeedbackKindAddsItsOwnWeightAndARatingScalesWithItsDistanceFromThree() {
    assertEquals(0.5, Scoring.weight(fb(FeedbackKind.THUMBS_UP, null, null), W));
    assertEquals(-0.25, Scoring.weight(fb(FeedbackKind.THUMBS_DOWN, null, null), W));
    assertEquals(0.125, Scoring.weight(fb(FeedbackKind.ADOPTED, null, null), W));
    assertEquals(-0.0625, Scoring.weight(fb(FeedbackKind.REPEATED_QUESTION, null, null), W));
    assertEquals(-0.03125, Scoring.weight(fb(FeedbackKind.HUMAN_HANDOFF, null, null), W));
    // weight × (value − 3) / 2
    assertEquals(4.0, Scoring.weight(fb(FeedbackKind.RATING, 5.0, null), W));
    assertEquals(-2.0, Scoring.weight(fb(FeedbackKind.RATING, 2.0, null), W));
    assertEquals(0.0, Scoring.weight(fb(FeedbackKind.RATING, 3.0, null), W));
  }

  @Test
  void theRewardIsTheResultsWeightPlusTheFeedbacksClippedToPlusMinusOne() {
    assertEquals(0.75, Scoring.reward(withResult(TaskStatus.SUCCESS), W));
    assertEquals(-0.875, Scoring.reward(withResult(TaskStatus.FAILURE), W));
    assertEquals(-0.375, Scoring.reward(withResult(TaskStatus.TIMEOUT), W));
    assertEquals(0.0, Scoring.reward(State.empty(), W), "no result, no feedback");
    State s = withResult(TaskStatus.TIMEOUT).apply(fb(FeedbackKind.THUMBS_UP, null, null))
        .apply(fb(FeedbackKind.ADOPTED, null, null));
    assertEquals(-0.375 + 0.5 + 0.125, Scoring.reward(s, W));
    assertEquals(1.0, Scoring.reward(withResult(TaskStatus.SUCCESS).apply(fb(FeedbackKind.RATING, 5.0, null)), W));
    assertEquals(-1.0, Scoring.reward(withResult(TaskStatus.FAILURE).apply(fb(FeedbackKind.RATING, 1.0, null)), W));
  }

  @Test
  void perTurnRewardsSumTheFeedbackOnEachResponseClipped() {
    State s = State.empty()
        .apply(fb(FeedbackKind.RATING, 4.0, "r2"))
        .apply(fb(FeedbackKind.THUMBS_UP, null, "r1"))
        .apply(fb(FeedbackKind.ADOPTED, null, "r2"))
        .apply(fb(FeedbackKind.THUMBS_DOWN, null, null))
        .apply(fb(FeedbackKind.RATING, 5.0, "r3"));
    Map<String, Double> turns = Scoring.turnRewards(s, W);
    assertEquals(List.of("r2", "r1", "r3"), List.copyOf(turns.keySet()), "in the order first rated");
    assertEquals(1.0, turns.get("r2"), "2 + 0.125 clipped");
    assertEquals(0.5, turns.get("r1"));
    assertEquals(1.0, turns.get("r3"), "4 clipped");
    State down = State.empty().apply(fb(FeedbackKind.RATING, 1.0, "r1"));
    assertEquals(Map.of("r1", -1.0), Scoring.turnRewards(down, W));
  }

  @Test
  void qualityIsAFifthForEachCompletenessCriterion() {
    State empty = State.empty();
    assertEquals(0.2, Scoring.quality(empty), 1e-12, "only: no tool error left unexplained");
    assertEquals(0.4, Scoring.quality(empty.apply(message(Role.user))), 1e-12);
    assertEquals(0.4, Scoring.quality(empty.apply(message(Role.assistant))), 1e-12);
    assertEquals(0.2, Scoring.quality(empty.apply(message(Role.system))), 1e-12);
    assertEquals(0.4, Scoring.quality(withResult(TaskStatus.FAILURE)), 1e-12);
    assertEquals(0.4, Scoring.quality(empty.apply(fb(FeedbackKind.THUMBS_DOWN, null, null))), 1e-12);
    State failedTool = empty.apply(new ToolCallRecorded("t", T, T, "c", "x", null, null, false, null));
    assertEquals(0.0, Scoring.quality(failedTool), 1e-12);
    assertEquals(0.4, Scoring.quality(failedTool.apply(message(Role.assistant))), 1e-12);
  }

  private MessageRecorded message(Role role) {
    return new MessageRecorded("m" + n++, T, T, role, "text", null, null);
  }
}
