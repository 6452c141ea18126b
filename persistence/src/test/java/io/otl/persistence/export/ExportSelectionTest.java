package io.otl.persistence.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.session.AgentSession;
import io.otl.core.session.InferenceCall;
import io.otl.core.session.SessionModel.Counts;
import io.otl.core.session.SessionModel.FeedbackKind;
import io.otl.core.session.SessionModel.Outcome;
import io.otl.core.session.SessionModel.Role;
import io.otl.core.session.SessionModel.TaskStatus;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which reason an SFT export counts a session under, when several apply. */
class ExportSelectionTest {
  private static final Instant T = Instant.parse("2026-01-01T00:00:00Z");

  /** One question, one answer rated down by msgId, completed with the given reward. */
  private static Trajectory ratedDown(double reward) {
    return answered(reward, FeedbackKind.THUMBS_DOWN);
  }

  /** One question, one answer given the feedback {@code kind} by msgId, completed with the given reward. */
  private static Trajectory answered(double reward, FeedbackKind kind) {
    return new Trajectory.Builder("s-" + reward)
        .add(new AgentSession.SessionStarted("st", T, T, "agent-a", "1", "v1", Map.of()))
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "Weather in Oslo?", null, null))
        .add(new AgentSession.MessageRecorded("m2", T, T, Role.assistant, "No idea.", "resp-1", 9L))
        .add(new AgentSession.FeedbackRecorded("f1", T, T, "f1", kind, null, "user", "resp-1"))
        .add(new AgentSession.TrajectoryCompleted("done", T, T, "agent-a", "v1", reward, 1.0,
            new Counts(2, 0, 0, 1), new Outcome(TaskStatus.SUCCESS, null, 0, 0, 1, null)))
        .build();
  }

  private static Map<String, Integer> reasons(Trajectory t) {
    ExportExclusions exclusions = new ExportExclusions();
    ExportSelection selection = new ExportSelection("agent-a", ExportFilters.DEFAULTS, Set.of(), exclusions, false);
    assertFalse(selection.completed(t) && selection.sft(t), "no SFT line for " + t.sessionId());
    return exclusions.byReason();
  }

  /**
   * A PPO/GRPO task's reference is its recorded answer, and the rendered workflow scores rollouts
   * against it alone: a failed session's "Sorry, I cannot help." became the answer to reproduce
   * (trial t13, read against Trinity-RFT's simple_workflow). Such a task is left out of that file;
   * an export for any other use (the command line's rl, distillation's prompts) keeps every reward.
   */
  @Test
  void aTaskWhoseAnswerFailedIsNoReferenceForPpoOrGrpo() {
    Trajectory failed = answered(-1.0, FeedbackKind.THUMBS_UP);
    Trajectory passed = answered(1.0, FeedbackKind.THUMBS_UP);
    ExportExclusions exclusions = new ExportExclusions();
    ExportSelection graded = new ExportSelection("agent-a", ExportFilters.DEFAULTS, Set.of(), exclusions, true);
    assertFalse(graded.rl(failed));
    assertTrue(graded.rl(passed));
    assertEquals(Map.of(ExportExclusions.REFERENCE_BELOW_SFT_MIN_REWARD, 1), exclusions.byReason());
    ExportSelection everyReward = new ExportSelection("agent-a", ExportFilters.DEFAULTS, Set.of(),
        new ExportExclusions(), false);
    assertTrue(everyReward.rl(failed));
  }

  /**
   * Trial t55: a grpo job's file held the tasks of sessions served by a rolled-back version, whose
   * answers became the references its rollouts were scored against. Such a task is left out of a
   * PPO/GRPO job's file, counted as served-by-rolled-back-version like an SFT line; an export for any
   * other use (the command line's rl, distillation's prompts) keeps the task.
   */
  @Test
  void aRolledBackVersionsAnswerIsNoReferenceForPpoOrGrpo() {
    Trajectory servedByV1 = answered(1.0, FeedbackKind.THUMBS_UP);
    ExportExclusions exclusions = new ExportExclusions();
    ExportSelection graded = new ExportSelection("agent-a", ExportFilters.DEFAULTS, Set.of("v1"), exclusions, true);
    assertFalse(graded.rl(servedByV1));
    assertEquals(Map.of(ExportExclusions.ROLLED_BACK_VERSION, 1), exclusions.byReason());
    assertTrue(new ExportSelection("agent-a", ExportFilters.DEFAULTS, Set.of("v2"), new ExportExclusions(), true)
        .rl(servedByV1), "another version's rollback says nothing of v1's answers");
    assertTrue(new ExportSelection("agent-a", ExportFilters.DEFAULTS, Set.of("v1"), new ExportExclusions(), false)
        .rl(servedByV1), "an export for any other use keeps the task");
  }

  /**
   * Trial t27: a PPO/GRPO task whose every answer its user rated down (the session's reward still
   * passed sft-min-reward) has no reference to score rollouts against: left out as rated-down-answer,
   * not written with the rejected answer (or null) as the ground truth.
   */
  @Test
  void aTaskWhoseOnlyAnswerWasRatedDownIsNoReferenceForPpoOrGrpo() {
    ExportExclusions exclusions = new ExportExclusions();
    ExportSelection graded = new ExportSelection("agent-a", ExportFilters.DEFAULTS, Set.of(), exclusions, true);
    assertFalse(graded.rl(ratedDown(1.0)));
    assertEquals(Map.of(ExportExclusions.RATED_DOWN_ANSWER, 1), exclusions.byReason());
    assertTrue(new ExportSelection("agent-a", ExportFilters.DEFAULTS, Set.of(), new ExportExclusions(), false)
        .rl(ratedDown(1.0)), "an export for any other use keeps the task (reference null)");
  }

  /** The usual case: the rated-down answer pulled the reward down, which is the reason a reader looks for. */
  @Test
  void aRatedDownSessionBelowTheRewardIsCountedBelowTheReward() {
    assertEquals(Map.of(ExportExclusions.BELOW_SFT_MIN_REWARD, 1), reasons(ratedDown(0.0)));
  }

  @Test
  void aRatedDownSessionThatPassesTheFiltersIsCountedRatedDown() {
    assertEquals(Map.of(ExportExclusions.RATED_DOWN_ANSWER, 1), reasons(ratedDown(1.0)));
  }

  /**
   * Trial t126: a session started on v0 keeps v0 as its version, but after a promotion it is routed by
   * its bucket, so the canary vb answered its second turn; vb was rolled back, and the SFT line (and
   * a grpo task's reference) still trained vb's answer. An answer a rolled-back version gave excludes
   * the session as its start on that version does; a stable that answered for it (fallbackFrom) does not.
   */
  @Test
  void anAnswerARolledBackVersionGaveMidSessionExcludesTheSession() {
    Trajectory answeredByVb = twoTurns(new InferenceCall("vb", null, null, null, null, "stop", null, null, null,
        null, null));
    Trajectory fallbackFromVb = twoTurns(new InferenceCall("va", null, null, null, null, "stop", null, null, "vb",
        null, null));
    ExportExclusions exclusions = new ExportExclusions();
    ExportSelection sft = new ExportSelection("agent-a", ExportFilters.DEFAULTS, Set.of("vb"), exclusions, false);
    assertFalse(sft.completed(answeredByVb) && sft.sft(answeredByVb));
    assertEquals(Map.of(ExportExclusions.ROLLED_BACK_VERSION, 1), exclusions.byReason());
    assertTrue(sft.sft(fallbackFromVb), "the stable's answer for a failing vb is the stable's");
    Trajectory vbFailedThenV0 = twoTurns(new InferenceCall("v0", null, null, null, null, "stop", null, null, null,
        null, null), new InferenceCall("vb", null, null, null, null, null, null, "the model server answered HTTP 500",
        null, null, null));
    assertTrue(sft.completed(vbFailedThenV0) && sft.sft(vbFailedThenV0),
        "a failed call of vb answered nothing: the session is not vb's (review t129)");
    ExportSelection graded = new ExportSelection("agent-a", ExportFilters.DEFAULTS, Set.of("vb"),
        new ExportExclusions(), true);
    assertFalse(graded.rl(answeredByVb), "vb's answer is no reference to score rollouts against");
    assertFalse(graded.canBeChosen(answeredByVb), "nor a DPO pair's chosen side");
  }

  /** Started on v0; the second answer given as {@code second} says. */
  private static Trajectory twoTurns(InferenceCall second) {
    return twoTurns(second, null);
  }

  /** As {@link #twoTurns(InferenceCall)}, with {@code failed} (when not null) a failed call before the first answer. */
  private static Trajectory twoTurns(InferenceCall second, InferenceCall failed) {
    InferenceCall first = new InferenceCall("v0", null, null, null, null, "stop", null, null, null, null, null);
    Trajectory.Builder b = new Trajectory.Builder("s-" + second.modelVersion() + (failed == null ? "" : "-f"))
        .add(new AgentSession.SessionStarted("st", T, T, "agent-a", "1", "v0", Map.of()))
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "Weather in Oslo?", null, null));
    if (failed != null) b.add(new AgentSession.MessageRecorded("f1", T, T, Role.assistant, "", null, 9L, failed));
    return b
        .add(new AgentSession.MessageRecorded("m2", T, T, Role.assistant, "Sunny.", "resp-1", 9L, first))
        .add(new AgentSession.MessageRecorded("m3", T, T, Role.user, "And tomorrow?", null, null))
        .add(new AgentSession.MessageRecorded("m4", T, T, Role.assistant, "Rain.", "resp-2", 9L, second))
        .add(new AgentSession.TrajectoryCompleted("done", T, T, "agent-a", "v0", 1.0, 1.0,
            new Counts(4, 0, 0, 0), new Outcome(TaskStatus.SUCCESS, null, 0, 0, 0, null)))
        .build();
  }
}
