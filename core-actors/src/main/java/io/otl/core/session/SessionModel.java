package io.otl.core.session;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonInclude;

/** The small vocabularies of a session (design §3.1, §3.1.1), shared by entity, API and export. */
public final class SessionModel {
  private SessionModel() {}

  /**
   * The longest {@code latencyMs} an input may carry: 24 hours, in milliseconds. A latency is how long one model
   * or tool call took; 9223372036854775807 was stored, and an assistant answer's latency is the canary's
   * response-latency figure, so one absurd value could weigh on a rollout decision (trial-api).
   */
  public static final long MAX_LATENCY_MS = 86_400_000L;

  public enum Role {
    system, user, assistant, tool;

    /** values() copies its array at every call: parse runs for every message (and the state's scoring). */
    private static final Role[] ALL = values();

    /**
     * In any case, as a feedback kind and a result's status are read ({@code "USER"} is {@code user}); stored
     * in lower case, OpenAI's spelling, which chat templates compare. "USER" was a 400 while "thumbs_up" and
     * "success" in the same batch were taken (trial-api).
     */
    public static Role parse(String s) {
      if (s == null) return null;
      for (Role r : ALL) if (r.name().equalsIgnoreCase(s)) return r;
      return null;
    }
  }

  public enum FeedbackKind {
    THUMBS_UP, THUMBS_DOWN, RATING, ADOPTED, REPEATED_QUESTION, HUMAN_HANDOFF;

    private static final FeedbackKind[] ALL = values();

    public static FeedbackKind parse(String s) {
      if (s == null) return null;
      for (FeedbackKind k : ALL) if (k.name().equalsIgnoreCase(s)) return k;
      return FeedbackKindAliases.resolve(s);
    }
  }

  public enum TaskStatus {
    SUCCESS, FAILURE, TIMEOUT;

    private static final TaskStatus[] ALL = values();

    public static TaskStatus parse(String s) {
      if (s == null) return null;
      for (TaskStatus t : ALL) if (t.name().equalsIgnoreCase(s)) return t;
      return null;
    }
  }

  public enum Status { NEW, ACTIVE, COMPLETED }

  /** How many of each kind a trajectory holds. */
  public record Counts(int messages, int toolCalls, int steps, int feedback) {}

  /**
   * The per-session figures ModelVersion compares between versions (design §3.3): task result,
   * explicit satisfaction signals and the session's own p95 assistant latency.
   */
  public record Outcome(
      TaskStatus status, Double meanRating, int ratings, int thumbsUp, int thumbsDown, Double latencyP95Ms,
      // Inference-gateway figures for the canary guardrails (issue #19); left out when null, so
      // sessions without gateway calls are stored exactly as before and older events read null.
      @JsonInclude(JsonInclude.Include.NON_NULL) Integer modelCalls,
      @JsonInclude(JsonInclude.Include.NON_NULL) Integer upstreamErrors,
      @JsonInclude(JsonInclude.Include.NON_NULL) Long tokens,
      // When the session started (null in events written before it was carried): the canary's
      // sample-ratio check leaves out sessions routed in an earlier step.
      @JsonInclude(JsonInclude.Include.NON_NULL) java.time.Instant sessionStartedAt) {

    @JsonCreator
    public Outcome {}

    public Outcome(
        TaskStatus status, Double meanRating, int ratings, int thumbsUp, int thumbsDown, Double latencyP95Ms) {
      this(status, meanRating, ratings, thumbsUp, thumbsDown, latencyP95Ms, null, null, null);
    }

    public Outcome(TaskStatus status, Double meanRating, int ratings, int thumbsUp, int thumbsDown,
        Double latencyP95Ms, Integer modelCalls, Integer upstreamErrors, Long tokens) {
      this(status, meanRating, ratings, thumbsUp, thumbsDown, latencyP95Ms, modelCalls, upstreamErrors, tokens, null);
    }
  }
}
