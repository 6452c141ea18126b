package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.otl.core.session.AgentSession.FeedbackRecorded;
import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.AgentSession.TaskResultRecorded;
import io.otl.core.session.SessionModel.FeedbackKind;
import io.otl.core.session.SessionModel.Outcome;
import io.otl.core.session.SessionModel.Role;
import io.otl.core.session.SessionModel.TaskStatus;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The outcome a session reports to its model version's canary (PIT found these figures unchecked:
 * counts, mean rating, the p95 rank and the gateway guardrail figures could change unnoticed).
 */
class ScoringTest {
  private static final Instant T = Instant.parse("2025-06-01T10:00:00Z");
  private int n;

  private MessageRecorded assistant(long latencyMs, InferenceCall call) {
    return new MessageRecorded("m" + n++, T, T, Role.assistant, "a", null, latencyMs, call);
  }

  private FeedbackRecorded feedback(FeedbackKind kind, Double value) {
    return new FeedbackRecorded("f" + n++, T, T, "fb" + n, kind, value, null);
  }

  private static InferenceCall call(Integer prompt, Integer completion, String error, String fallbackFrom) {
    return new InferenceCall("v2", "m", null, prompt, completion, "stop", false, error, fallbackFrom, null, null);
  }

  @Test
  void outcomeCountsFeedbackAveragesRatingsAndTakesTheNearestRankP95() {
    State s = State.empty();
    s = s.apply(new MessageRecorded("u", T, T, Role.user, "q", null, null));
    // 20 latencies 10, 20, ..., 200 in shuffled order: nearest-rank p95 is the 19th, 190.
    List<Integer> order = List.of(7, 3, 20, 1, 15, 9, 12, 2, 18, 5, 11, 16, 4, 19, 8, 13, 6, 17, 10, 14);
    for (int k : order) s = s.apply(assistant(k * 10L, null));
    s = s.apply(feedback(FeedbackKind.THUMBS_UP, null));
    s = s.apply(feedback(FeedbackKind.THUMBS_UP, null));
    s = s.apply(feedback(FeedbackKind.THUMBS_DOWN, null));
    s = s.apply(feedback(FeedbackKind.RATING, 5.0));
    s = s.apply(feedback(FeedbackKind.RATING, 2.0));
    s = s.apply(feedback(FeedbackKind.ADOPTED, null));
    s = s.apply(new TaskResultRecorded("r", T, T, TaskStatus.SUCCESS, null));

    Outcome o = Scoring.outcome(s);
    assertEquals(TaskStatus.SUCCESS, o.status());
    assertEquals(2, o.thumbsUp());
    assertEquals(1, o.thumbsDown());
    assertEquals(2, o.ratings());
    assertEquals(3.5, o.meanRating(), 1e-12);
    assertEquals(190.0, o.latencyP95Ms(), 1e-12);
    assertNull(o.modelCalls(), "no gateway call: no guardrail figures");
    assertNull(o.upstreamErrors());
    assertNull(o.tokens());
  }

  @Test
  void outcomeWithoutRatingsOrLatencyHasNoFigureForThem() {
    State s = State.empty().apply(feedback(FeedbackKind.THUMBS_DOWN, null));
    Outcome o = Scoring.outcome(s);
    assertNull(o.meanRating());
    assertEquals(0, o.ratings());
    assertNull(o.latencyP95Ms());
    assertNull(o.status());
    assertEquals(1, o.thumbsDown());
  }

  @Test
  void gatewayCallsGiveErrorsFallbacksAndTokensForTheGuardrails() {
    State s = State.empty()
        .apply(assistant(100, call(10, 5, null, null)))
        .apply(assistant(100, call(7, null, "upstream 502", null)))
        .apply(assistant(100, call(null, 3, null, "v2")))
        .apply(assistant(100, call(null, null, null, null)));
    Outcome o = Scoring.outcome(s);
    assertEquals(4, o.modelCalls());
    assertEquals(2, o.upstreamErrors(), "an error and a fallback to the stable both count");
    assertEquals(25L, o.tokens(), "10 + 5 + 7 + 3");
    State noUsage = State.empty().apply(assistant(100, call(null, null, null, null)));
    assertNull(Scoring.outcome(noUsage).tokens(), "no usage reported: no token figure, not 0");
    assertEquals(0, Scoring.outcome(noUsage).upstreamErrors());
  }

  @Test
  void percentileIsNearestRank() {
    assertNull(Scoring.percentile(new double[0], 0.95));
    assertEquals(7.0, Scoring.percentile(new double[] {7}, 0.95));
    assertEquals(2.0, Scoring.percentile(new double[] {1, 2, 3, 4}, 0.5), "rank ceil(0.5 * 4) = 2");
    assertEquals(4.0, Scoring.percentile(new double[] {1, 2, 3, 4}, 0.95), "rank ceil(3.8) = 4");
  }
}
