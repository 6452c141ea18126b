package io.otl.persistence.audit;

import io.otl.core.api.AuditLog;
import io.otl.core.api.AuditLog.Kind;
import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.model.CanaryStatistics.TestResult;
import io.otl.core.model.Deployments;
import io.otl.core.model.Metric;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.AgentSession;
import io.otl.core.session.InferenceCall;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.pekko.NotUsed;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.stream.javadsl.Source;

/**
 * A readable text timeline of an entity's journal, one line per event (model outcomes are counted,
 * not listed), streamed as it is read. Used by {@code java -jar otl-node.jar audit … --format text}.
 *
 * <p>Model versions end with one summary line per version, e.g. {@code v7 REGISTERED from job J
 * (dataset 5,000 trajectories, sha256 …) → CANARY 5% at … → ROLLED_BACK at …: task success rate
 * 0.71 vs stable 0.82 (n=412 / 7,880, z=5.3 > 1.64)}.
 */
public final class Timeline {
  private final AuditReader reader;
  private final PrintStream out;
  private final Duration timeout;

  public Timeline(AuditReader reader, PrintStream out, Duration timeout) {
    this.reader = reader;
    this.out = out;
    this.timeout = timeout;
  }

  /**
   * Writes the timeline of {@code id}, up to {@code asOf} when given.
   *
   * @throws AuditLog.NotFound for an unknown entity (or none at {@code asOf})
   */
  public void write(Kind kind, String id, Instant asOf) {
    String pid = AuditReader.persistenceId(kind, id);
    Source<EventEnvelope, NotUsed> events = reader.events(pid, 1);
    if (asOf != null) events = events.takeWhile(env -> !AuditReader.knownAt(env).isAfter(asOf));
    // A job's lines are its own events, but the coordinator's state (the pool a line shows) is built from
    // all of them: built from the job's alone, "→ pool" and "now:" said 0 while the pool held 61.
    java.util.function.Predicate<Object> shown = kind != Kind.JOB ? e -> true
        : e -> e instanceof TrainingCoordinator.JobEvent je && id.equals(je.jobId());
    Formatter f = switch (kind) {
      case SESSION -> new SessionFormatter();
      case COORDINATOR -> new CoordinatorFormatter(null);
      case JOB -> new CoordinatorFormatter(id);
      case MODEL -> new ModelFormatter(lineage(id));
    };
    long[] count = {0};
    await(events.runForeach(env -> {
      if (!shown.test(env.event())) {
        f.absorb(env);
        return;
      }
      // The header comes with the first event, so an unknown id prints nothing before its
      // "not found" (the CLI's stdout stays empty, as for any other failure).
      if (count[0] == 0) println(header(kind, id, pid, asOf));
      count[0]++;
      if (env.event() instanceof UnreadableEvent u) {
        line(env, "UNREADABLE: " + u.reason());
        return;
      }
      f.accept(env);
    }, reader.system()).toCompletableFuture());
    if (count[0] == 0) {
      // the reader names the reason: unknown, or not yet existing at asOf
      await(reader.page(kind, id, 0, 1, asOf).toCompletableFuture());
      throw new AuditLog.NotFound(kind.wire() + " " + id + " has no events");
    }
    f.finish();
    if (kind == Kind.SESSION) sessionLineage(id);
    if (kind == Kind.JOB) jobLineage(id);
  }

  private static String header(Kind kind, String id, String pid, Instant asOf) {
    return "audit of " + kind.wire() + " " + id + " (journal " + pid + ")" + (asOf == null ? "" : " as of " + asOf);
  }

  private Map<String, AuditLog.JobLineage> lineage(String agentId) {
    Map<String, AuditLog.JobLineage> jobs = new LinkedHashMap<>();
    try {
      AuditLog.ModelLineage l = await(reader.modelLineage(agentId, null).toCompletableFuture());
      for (AuditLog.VersionLineage v : l.versions()) if (v.job() != null) jobs.put(v.version(), v.job());
    } catch (RuntimeException e) {
      if (!(AuditReader.unwrap(e) instanceof AuditLog.NotFound)) throw e;
    }
    return jobs;
  }

  private void sessionLineage(String sessionId) {
    AuditLog.SessionLineage l = await(reader.sessionLineage(sessionId).toCompletableFuture());
    if (l.jobs().isEmpty()) {
      println("trained in: no job has taken this session yet");
      return;
    }
    for (AuditLog.SessionJob j : l.jobs()) {
      String role = j.replayed() ? ", in its dataset, replayed from an earlier job's data"
          : j.inDataset() ? ", in its dataset"
          : j.heldOutForEval() ? ", not in its dataset: held out as its evaluation set"
          // The export's reason, as the manifest's exclusions name it; unknown for a manifest of an earlier build.
          : j.excludedFor() != null ? ", not in its dataset: " + j.excludedFor()
          : ", not in its dataset";
      println((j.inDataset() ? "trained in: job " : "taken by: job ") + j.jobId() + " (" + j.status() + role
          + ")" + (j.versions().isEmpty() ? "" : " → model " + String.join(", ", j.versions())));
    }
  }

  private void jobLineage(String jobId) {
    AuditLog.JobLineage l = await(reader.jobLineage(jobId).toCompletableFuture());
    println("lineage: " + l.requestedSessionIds().size() + " trajectories requested"
        + (l.dataset() == null ? ", no dataset exported"
            : ", dataset " + group(l.dataset().count()) + " lines (" + l.dataset().sessionIds().size()
                + " trajectories), sha256 " + l.dataset().sha256() + ", " + l.dataset().path())
        + (l.candidateVersion() == null ? "" : " → model " + l.candidateVersion()));
  }

  private <T> T await(java.util.concurrent.CompletableFuture<T> f) {
    try {
      return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable c = AuditReader.unwrap(e);
      if (c instanceof RuntimeException r) throw r;
      throw new IllegalStateException(c);
    } catch (Exception e) {
      throw new IllegalStateException("the journal did not answer within " + timeout + ": " + e, e);
    }
  }

  // ------------------------------------------------------------------------------------------

  private interface Formatter {
    void accept(EventEnvelope env);

    /** An event of the entity that is not shown (another job's): it still moves the state. */
    default void absorb(EventEnvelope env) {}

    default void finish() {}
  }

  /**
   * Every line goes out through here, one physical line per call: client text (a rollback reason,
   * an agent or model version, a tool name) is printed with its line breaks and other control
   * characters escaped, so a value holding "\n2026-01-01T00:00:00Z  #9  v1 PROMOTED" can never
   * print a line that reads like an event of the journal.
   */
  private void println(String line) {
    out.println(oneLine(line));
  }

  /** {@code text} with control characters, Unicode line/paragraph separators and bidi overrides escaped. */
  static String oneLine(String text) {
    StringBuilder b = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      String escaped = switch (c) {
        case '\n' -> "\\n";
        case '\r' -> "\\r";
        case '\t' -> "\\t";
        default -> Character.getType(c) == Character.CONTROL || c == '\u2028' || c == '\u2029'
            || (c >= '\u202A' && c <= '\u202E') || (c >= '\u2066' && c <= '\u2069')
            ? String.format(Locale.ROOT, "\\u%04x", (int) c) : null;
      };
      if (escaped != null && b == null) b = new StringBuilder(text.length() + 8).append(text, 0, i);
      if (b != null) {
        if (escaped != null) b.append(escaped);
        else b.append(c);
      }
    }
    return b == null ? text : b.toString();
  }

  private void line(EventEnvelope env, String text) {
    println(AuditReader.at(env) + "  #" + env.sequenceNr() + "  " + text);
  }

  private final class SessionFormatter implements Formatter {
    AgentSession.State state = AgentSession.State.empty();

    @Override
    public void accept(EventEnvelope env) {
      AgentSession.Event e = (AgentSession.Event) env.event();
      // A later start adds metadata (the gateway's tool lists) or changes a version: "started" twice
      // read as a restart, and "metadata added: " alone hid that the session now counts for another model.
      String text = e instanceof AgentSession.SessionStarted s && state.agentId() != null
          ? laterStart(state, s) : describe(e);
      state = state.apply(e);
      line(env, text);
    }

    @Override
    public void finish() {
      println("now: " + state.status() + ", " + state.counts().messages() + " messages, "
          + state.counts().toolCalls() + " tool calls, " + state.counts().steps() + " reasoning steps, "
          + state.counts().feedback() + " feedback" + (state.reward() == null ? "" : ", reward " + num(state.reward())
              + ", quality " + num(state.qualityScore())));
    }
  }

  /**
   * A later start of a session as what it changed against the state before it: metadata keys it added, keys
   * whose value it changed, versions. Every key it carried read "metadata added", also one already there with
   * the same value (the AgentScope hook's tool list sent again by the gateway) or another (the gateway's
   * {@code source}), so the audit claimed changes that were none (trial t113).
   */
  static String laterStart(AgentSession.State state, AgentSession.SessionStarted s) {
    List<String> parts = new ArrayList<>();
    java.util.Set<String> added = new java.util.TreeSet<>();
    java.util.Set<String> changed = new java.util.TreeSet<>();
    java.util.Set<String> same = new java.util.TreeSet<>();
    Map<String, String> before = state.metadata() == null ? Map.of() : state.metadata();
    if (s.metadata() != null) {
      s.metadata().forEach((k, v) -> {
        if (!before.containsKey(k)) added.add(k);
        else if (java.util.Objects.equals(before.get(k), v)) same.add(k);
        else changed.add(k);
      });
    }
    if (!added.isEmpty()) parts.add("metadata added: " + String.join(", ", added));
    if (!changed.isEmpty()) parts.add("metadata changed: " + String.join(", ", changed));
    if (s.agentVersion() != null && !s.agentVersion().equals(state.agentVersion())) {
      parts.add("agent version now " + s.agentVersion());
    }
    if (s.modelVersion() != null && !s.modelVersion().equals(state.modelVersion())) {
      parts.add("model version now " + s.modelVersion());
    }
    if (!parts.isEmpty()) return String.join("; ", parts);
    return "started again, nothing changed" + (same.isEmpty() ? "" : " (metadata sent again: " + String.join(", ", same) + ")");
  }

  static String describe(AgentSession.Event event) {
    if (event instanceof AgentSession.SessionStarted e) {
      return "started for agent " + e.agentId() + (e.agentVersion() == null ? "" : " (agent " + e.agentVersion() + ")")
          + (e.modelVersion() == null ? "" : ", model " + e.modelVersion());
    } else if (event instanceof AgentSession.MessageRecorded e) {
      // A failed model call (the gateway's, a failed OTLP chat span) is an empty answer: "assistant: " alone
      // read as an answer that said nothing, where the call failed.
      String failed = e.inference() == null || e.inference().error() == null ? ""
          : (e.content().isEmpty() ? "" : " ") + "(call FAILED: " + clip(e.inference().error()) + ")";
      // An answer the agent's client left before having whole (a cancelled stream, a client timeout) read
      // as one the agent got and went on from.
      if (failed.isEmpty() && e.inference() != null && Boolean.TRUE.equals(e.inference().aborted())) {
        failed = (e.content().isEmpty() ? "" : " ") + "(ABORTED: the client left before the whole answer)";
      }
      return e.role() + ": " + clip(e.content()) + failed + (e.latencyMs() == null ? "" : " (" + e.latencyMs() + " ms)")
          + answeredBy(e.inference()) + cut(e.truncated()) + rated(e.msgId());
    } else if (event instanceof AgentSession.ToolCallRecorded e) {
      return "tool " + e.toolName() + (e.pending() ? " called" : e.success() ? " ok" : " FAILED") + (e.latencyMs() == null ? "" : " (" + e.latencyMs() + " ms)")
          + cut(e.truncated());
    } else if (event instanceof AgentSession.ReasoningStepRecorded e) {
      return reasoning(e);
    } else if (event instanceof AgentSession.FeedbackRecorded e) {
      return "feedback " + e.kind() + (e.value() == null ? "" : " " + num(e.value())) + " (" + e.feedbackId() + ")"
          + rated(e.msgId());
    } else if (event instanceof AgentSession.TaskResultRecorded e) {
      return "result " + e.status() + (e.detail() == null ? "" : ": " + clip(e.detail()));
    } else if (event instanceof AgentSession.TrajectoryCompleted e) {
      return "COMPLETED: reward " + num(e.reward()) + ", quality " + num(e.qualityScore());
    } else if (event instanceof AgentSession.RewardRevised e) {
      return "reward revised to " + num(e.reward()) + " (quality " + num(e.qualityScore()) + ") after feedback "
          + e.feedbackId();
    } else if (event instanceof AgentSession.ToolResultRecorded e) {
      return "tool result " + (e.success() ? "ok" : "FAILED") + " (call " + e.callEventId() + ")"
          + (e.latencyMs() == null ? "" : " (" + e.latencyMs() + " ms)") + cut(e.truncated());
    } else if (event instanceof AgentSession.MessageDetailsAdded e) {
      return "assistant answer's call details added by the node that answered it"
          + (e.inference() == null || e.inference().modelVersion() == null ? "" : " (version "
              + e.inference().modelVersion() + ")") + (e.latencyMs() == null ? "" : " (" + e.latencyMs() + " ms)");
    }
    return event.getClass().getSimpleName();
  }

  /**
   * Which version answered a model call, and the one that failed before it: the session's start names the
   * version it was routed to, so a turn the stable answered after the candidate failed (or after a rollback
   * moved the session) read as the candidate's answer, and "which version answered session X" had no answer
   * in the timeline.
   */
  private static String answeredBy(InferenceCall call) {
    if (call == null || call.modelVersion() == null) return "";
    return " (version " + clip(call.modelVersion())
        + (call.fallbackFrom() == null ? "" : ", fallback from " + clip(call.fallbackFrom())) + ")";
  }

  /**
   * An answer's msgId, and the msgId a feedback rates, so that an operator can tell which answer a
   * per-turn rating was for: the timeline showed neither, and a session's ratings read as the whole
   * session's.
   */
  private static String rated(String msgId) {
    return msgId == null ? "" : " [msgId " + clip(msgId) + "]";
  }

  /**
   * A step with a thought shows it; one without (an AgentScope error step: action {@code error}, its
   * observation the exception's class) names what it has instead: "reasoning #3: " read as a lost line.
   */
  private static String reasoning(AgentSession.ReasoningStepRecorded e) {
    // A step sent without index is stored with -1 (docs/api.md "Steps"): "reasoning #-1" read as a fault.
    String head = e.index() < 0 ? "reasoning (no index)" : "reasoning #" + e.index();
    if (!blank(e.thought())) return head + ": " + clip(e.thought());
    List<String> parts = new java.util.ArrayList<>();
    if (!blank(e.action())) parts.add("action " + clip(e.action()));
    if (!blank(e.observation())) parts.add("observation " + clip(e.observation()));
    return parts.isEmpty() ? head + " (no thought, action or observation recorded)"
        : head + " (no thought): " + String.join(", ", parts);
  }

  private static boolean blank(String s) {
    return s == null || s.isBlank();
  }

  private final class CoordinatorFormatter implements Formatter {
    private final String jobId;
    TrainingCoordinator.State state = TrainingCoordinator.State.EMPTY;

    /** @param jobId the job whose timeline this is, null for the whole coordinator */
    CoordinatorFormatter(String jobId) {
      this.jobId = jobId;
    }

    @Override
    public void accept(EventEnvelope env) {
      Event e = (Event) env.event();
      boolean overriddenBefore = state.policyChange() != null && !state.policyChange().overrides().isEmpty();
      state = TrainingCoordinator.applyEvent(state, e);
      line(env, e instanceof TrainingCoordinator.PolicyChanged pc && pc.overrides().isEmpty() && !overriddenBefore
          ? unchangedPolicy(pc.changedBy(), "training policy", "model")
          : describe(e, state));
    }

    @Override
    public void absorb(EventEnvelope env) {
      if (env.event() instanceof Event e) state = TrainingCoordinator.applyEvent(state, e);
    }

    @Override
    public void finish() {
      if (jobId != null) {
        println("now: job " + jobId + " " + state.jobs().stream().filter(j -> jobId.equals(j.jobId()))
            .map(j -> String.valueOf(j.status())).findFirst().orElse("unknown") + "; its agent's pool " + state.poolSize());
        return;
      }
      println("now: pool " + state.poolSize() + ", " + state.jobs().size() + " jobs"
          + state.activeJob().map(j -> ", active " + j.jobId() + " " + j.status()).orElse(", no active job"));
    }
  }

  /**
   * A PUT of one part of the policy journals the other part too, with no overrides: with none before
   * either, "run-time overrides cleared" told an auditor of a reset nobody made. The line does not say
   * the other part changed: a PUT of {} with nothing in force changes neither, and the coordinator
   * journals it all the same (the model only when its part differs), so "that change concerned the
   * other part" sent the auditor to an audit without it.
   */
  static String unchangedPolicy(String changedBy, String part, String otherAudit) {
    return part + " set by " + changedBy + ": no run-time overrides before or after (the file's): this part is"
        + " unchanged; whatever else the request changed is in the " + otherAudit + "'s audit";
  }

  static String describe(Event event, TrainingCoordinator.State after) {
    String pool = " → pool " + after.poolSize();
    if (event instanceof TrainingCoordinator.TrajectoryPooled e) {
      return "pooled " + e.sessionId() + " (quality " + num(e.qualityScore()) + ", reward " + num(e.reward()) + ")" + pool;
    } else if (event instanceof TrainingCoordinator.TrajectoryFiltered e) {
      return "filtered " + e.sessionId() + ": quality " + num(e.qualityScore()) + " below min-quality";
    } else if (event instanceof TrainingCoordinator.RewardUpdated e) {
      return "reward of " + e.sessionId() + " revised to " + num(e.reward());
    } else if (event instanceof TrainingCoordinator.RewardForwarded e) {
      return "reward of " + e.sessionId() + " forwarded to the Trinity proxy";
    } else if (event instanceof TrainingCoordinator.ScheduleArmed e) {
      return "schedule armed: " + e.cron() + " (" + e.zone() + "), slots after " + e.from();
    } else if (event instanceof TrainingCoordinator.ScheduledSlotFired e) {
      return "scheduled slot " + e.slot() + (e.missed() ? " (missed, fired late)" : "") + " fired → " + e.jobId();
    } else if (event instanceof TrainingCoordinator.ScheduledSlotSkipped e) {
      return "scheduled slot " + e.slot() + " skipped: " + e.reason();
    } else if (event instanceof TrainingCoordinator.JobRequested e) {
      return "job " + e.jobId() + " REQUESTED by the " + e.trigger().configName() + " trigger"
          + (e.requestedBy() == null || e.requestedBy().equals(e.trigger().configName()) ? "" : " (" + e.requestedBy() + ")")
          + ": " + group(e.sessionIds().size())
          + " trajectories, " + e.algorithm() + " on " + e.baseModel() + pool;
    } else if (event instanceof TrainingCoordinator.PreflightFailed e) {
      return "job " + e.jobId() + " FAILED pre-flight: " + String.join("; ", e.reasons())
          + (e.sessionsReturned() ? " (trajectories back in the pool)" : "") + pool;
    } else if (event instanceof TrainingCoordinator.DatasetExported e) {
      return "job " + e.jobId() + " dataset exported: " + group(e.manifest().count()) + " lines, sha256 "
          + e.manifest().sha256() + ", " + e.manifest().path()
          + (e.manifest().clean() ? "" : ", PII found: " + e.manifest().piiFindings());
    } else if (event instanceof TrainingCoordinator.DatasetExportFailed e) {
      return "job " + e.jobId() + " export attempt " + e.attempt() + " FAILED: " + e.error() + "; next attempt at "
          + e.nextAttemptAt();
    } else if (event instanceof TrainingCoordinator.JobSubmitting e) {
      return "job " + e.jobId() + " submitting (attempt " + e.attempt() + ")";
    } else if (event instanceof TrainingCoordinator.JobSubmitted e) {
      return "job " + e.jobId() + " SUBMITTED as " + e.externalId();
    } else if (event instanceof TrainingCoordinator.JobSubmitFailed e) {
      return "job " + e.jobId() + " submission attempt " + e.attempt() + " FAILED: " + e.error() + "; next attempt at "
          + e.nextAttemptAt();
    } else if (event instanceof TrainingCoordinator.JobStatusChanged e) {
      return "job " + e.jobId() + " " + e.status() + (e.message() == null || e.message().isBlank() ? "" : ": " + e.message());
    } else if (event instanceof TrainingCoordinator.JobSucceeded e) {
      return "job " + e.jobId() + " SUCCEEDED" + (e.outputModel() == null ? " (committed)"
          : ": " + e.outputModel().checkpointUri() + " " + e.outputModel().metrics()
              + (e.candidateVersion() == null ? "" : " → candidate " + e.candidateVersion()));
    } else if (event instanceof TrainingCoordinator.JobFailed e) {
      return "job " + e.jobId() + " FAILED: " + e.error();
    } else if (event instanceof TrainingCoordinator.JobCancelRequested e) {
      return "job " + e.jobId() + " cancel requested" + (e.requestedBy() == null ? "" : " by " + e.requestedBy());
    } else if (event instanceof TrainingCoordinator.JobCancelled e) {
      return "job " + e.jobId() + " CANCELLED: " + e.detail() + (e.unconfirmed() == null ? "" : "; " + e.unconfirmed());
    } else if (event instanceof TrainingCoordinator.CandidateHandedOver e) {
      return "job " + e.jobId() + " handed over to ModelVersion as " + e.version()
          + (e.renamedFrom() == null ? "" : " (" + e.renamedFrom() + " is another version's name)");
    } else if (event instanceof TrainingCoordinator.PolicyChanged e) {
      return "policy changed by " + e.changedBy() + ": " + (e.overrides().isEmpty()
          ? "run-time overrides cleared (the file's policy)" : "run-time overrides " + e.overrides());
    } else if (event instanceof TrainingCoordinator.SessionsForgotten e) {
      return "forgot " + group(e.count()) + " used or filtered sessions written before " + e.before()
          + " (no revision can reach them any more)" + pool;
    } else if (event instanceof TrainingCoordinator.ProxyRestarted e) {
      return "Trinity proxy restarted (model version back to " + e.modelVersion() + "; restart " + e.restarts()
          + " seen): its versions count from there";
    } else if (event instanceof TrainingCoordinator.ProxyModelObserved e) {
      return "Trinity proxy model version " + e.modelVersion()
          + (e.restartsSeen() == 0 ? "" : " (after proxy restart " + e.restartsSeen() + ")")
          + " observed → candidate " + e.version();
    }
    return event.getClass().getSimpleName();
  }

  /**
   * Where a transition's reason starts ("ROLLED_BACK (manual): why"): at ": ", not at any colon, so
   * a URL in the state text (v0's "base model m at http://host/v1") stays whole in the summary.
   */
  static int reasonStart(String text) {
    // Only a ": " outside parentheses: "undeploying m (load failed: unloading …)" keeps its reason
    // whole, where the cut left "(load failed" open in the summary (trial t121).
    int depth = 0;
    for (int i = 0; i + 1 < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '(') depth++;
      else if (c == ')' && depth > 0) depth--;
      else if (c == ':' && depth == 0 && text.charAt(i + 1) == ' ') return i;
    }
    return text.length();
  }

  private final class ModelFormatter implements Formatter {
    final Map<String, AuditLog.JobLineage> jobs;
    final Map<String, StringBuilder> summary = new LinkedHashMap<>();
    final Map<String, Long> outcomes = new LinkedHashMap<>();
    final Map<String, Long> revised = new LinkedHashMap<>();
    EventEnvelope firstOutcome;
    boolean rolloutOverridden;

    ModelFormatter(Map<String, AuditLog.JobLineage> jobs) {
      this.jobs = jobs;
    }

    @Override
    public void accept(EventEnvelope env) {
      if (env.event() instanceof ModelVersion.OutcomeRecorded o) {
        if (firstOutcome == null) firstOutcome = env;
        outcomes.merge(o.modelVersion(), 1L, Long::sum);
        return;
      }
      if (env.event() instanceof io.otl.core.model.ModelEvents.OutcomeRevised o) {
        if (firstOutcome == null) firstOutcome = env;
        revised.merge(o.modelVersion(), 1L, Long::sum);
        return;
      }
      flushOutcomes();
      if (env.event() instanceof io.otl.core.model.RolloutPolicy.RolloutPolicyChanged c) {
        line(env, c.overrides().isEmpty() && !rolloutOverridden ? unchangedPolicy(c.changedBy(), "rollout settings", "coordinator")
            : io.otl.core.model.RolloutPolicy.describe(c));
        rolloutOverridden = !c.overrides().isEmpty();
        return;
      }
      ModelVersion.TransitionEvent e = (ModelVersion.TransitionEvent) env.event();
      String text = describe(e);
      line(env, e.version() + " " + text);
      StringBuilder s = summary.computeIfAbsent(e.version(), v -> new StringBuilder(v));
      if (e instanceof ModelVersion.VersionRegistered) {
        s.append(' ').append(text, 0, text.indexOf(", artifact") < 0 ? text.length() : text.indexOf(", artifact"));
      } else if (!(e instanceof ModelVersion.EvaluationStarted)) {
        int cut = reasonStart(text);
        String head = text.substring(0, cut);
        String tail = text.substring(cut);
        boolean figures = e instanceof ModelVersion.VersionRolledBack || e instanceof ModelVersion.RolloutPaused;
        s.append(" → ").append(head).append(" at ").append(e.at()).append(figures ? tail : "");
      }
    }

    private void flushOutcomes() {
      if (firstOutcome == null) return;
      List<String> parts = new ArrayList<>();
      if (!outcomes.isEmpty()) parts.add(counted(outcomes, "session outcomes recorded"));
      if (!revised.isEmpty()) parts.add(counted(revised, "satisfaction scores from later feedback"));
      line(firstOutcome, String.join("; ", parts));
      outcomes.clear();
      revised.clear();
      firstOutcome = null;
    }

    private static String counted(Map<String, Long> byVersion, String what) {
      long n = byVersion.values().stream().mapToLong(Long::longValue).sum();
      return group(n) + " " + what + " ("
          + byVersion.entrySet().stream().map(x -> x.getKey() + ": " + group(x.getValue())).collect(Collectors.joining(", "))
          + ")";
    }

    @Override
    public void finish() {
      flushOutcomes();
      println("summary:");
      summary.values().forEach(s -> println("  " + s));
    }

    /** " by <actor>" for an operator's command, "" when the event names none (automatic, or older). */
    private static String by(String actor) {
      return actor == null ? "" : " by " + actor;
    }

    String describe(ModelVersion.TransitionEvent event) {
      if (event instanceof ModelVersion.VersionRegistered e) {
        String from;
        if (e.manual()) {
          from = "by hand" + by(e.actor());
        } else if (e.sourceJobId() == null) {
          from = "as candidate";
        } else {
          AuditLog.JobLineage j = jobs.get(e.version());
          from = "from job " + e.sourceJobId() + (j == null || j.dataset() == null ? ""
              : " (dataset " + group(j.dataset().sessionIds().size()) + " trajectories, " + group(j.dataset().count())
                  + " lines, sha256 " + j.dataset().sha256() + ")");
        }
        return "REGISTERED " + from + ", artifact " + e.artifact()
            + (e.offlineMetrics().isEmpty() ? "" : ", offline " + e.offlineMetrics());
      } else if (event instanceof ModelVersion.EvaluationStarted e) {
        return "EVALUATING" + (e.baselineVersion() == null ? " (no stable yet)" : " against " + e.baselineVersion());
      } else if (event instanceof ModelVersion.OfflineGatePassed e) {
        return "READY: " + e.note();
      } else if (event instanceof ModelVersion.OfflineGateFailed e) {
        return "REJECTED: " + String.join("; ", e.reasons());
      } else if (event instanceof ModelVersion.RolloutStarted e) {
        return "CANARY " + pct(e.plan().get(0)) + " against " + e.stableVersion() + ": " + e.reason()
            + " (plan " + e.plan().stream().map(Timeline::pct).collect(Collectors.joining(" → ")) + ")";
      } else if (event instanceof ModelVersion.StepAdvanced e) {
        return "RAMP " + pct(e.ratio()) + ": step " + e.fromStep() + " passed" + figures(e.tests(), false);
      } else if (event instanceof ModelVersion.RolloutPaused e) {
        return "PAUSED (" + (e.automatic() ? "automatic" : "manual" + by(e.actor())) + "): " + e.reason()
            + figures(e.tests(), true);
      } else if (event instanceof ModelVersion.RolloutResumed e) {
        return "RESUMED" + by(e.actor());
      } else if (event instanceof ModelVersion.VersionPromoted e) {
        return "STABLE (" + (e.automatic() ? "automatic" : "manual") + " promotion" + by(e.actor()) + "): " + e.reason()
            + (e.previousStable() == null ? "" : "; " + e.previousStable() + " retained until " + e.previousRetainedUntil());
      } else if (event instanceof ModelVersion.VersionRolledBack e) {
        String figures = figures(e.tests(), true);
        return "ROLLED_BACK (" + (e.automatic() ? "automatic" : "manual" + by(e.actor())) + "): "
            + (figures.isEmpty() ? e.reason() : figures.substring(2))
            + (e.restoredStable() == null ? "" : "; " + e.restoredStable() + " restored as stable");
      } else if (event instanceof Deployments.BaseModelRegistered e) {
        return "STABLE (base model " + e.model() + " at " + e.endpoint() + ", from configuration)";
      } else if (event instanceof Deployments.DeploymentRequested e) {
        // No served model: the gateway sends the agent's own model name (as the version's history says).
        return "DEPLOYING to " + e.backend() + " as "
            + (e.servedModel() == null ? "the agent's own model name" : e.servedModel()) + " (" + e.reason() + ")";
      } else if (event instanceof Deployments.DeploymentConfirmed e) {
        return "deployment confirmed" + (e.servedModel() == null ? "" : ": " + e.servedModel()) + " at " + e.endpoint();
      } else if (event instanceof Deployments.DeploymentFailed e) {
        return "DEPLOY_FAILED after " + e.attempts() + " attempt(s): " + e.error();
      } else if (event instanceof Deployments.UndeployRequested e) {
        return "undeploying" + (e.servedModel() == null ? "" : " " + e.servedModel()) + " (" + e.reason() + ")";
      } else if (event instanceof Deployments.Undeployed e) {
        return "undeployed" + (e.servedModel() == null ? "" : " " + e.servedModel());
      } else if (event instanceof io.otl.core.model.Supersession.CandidateSuperseded e) {
        return "RETIRED: superseded by " + e.supersededBy() + " (one rollout at a time)";
      } else if (event instanceof io.otl.core.model.EvalEvidence.GateWithoutEvidence e) {
        return "NO_EVIDENCE: " + e.reason();
      }
      return event.getClass().getSimpleName();
    }
  }

  /** The standard error at or below which a test had no variance (the console's threshold, 1e-6). */
  private static final double NO_VARIANCE_SE = 1e-6;

  /** "; task success rate 0.71 vs stable 0.82 (n=412 / 7,880, z=5.3 > 1.64)" for the tests shown. */
  static String figures(List<TestResult> tests, boolean degradedOnly) {
    if (tests == null || tests.isEmpty()) return "";
    StringBuilder b = new StringBuilder();
    for (TestResult t : tests) {
      if (degradedOnly && !t.degraded()) continue;
      boolean beyond = t.statistic() > t.criticalValue();
      // Without variance z is the floor's artefact: the test's own verdict says which side it fell.
      boolean degraded = t.degraded();
      // Every session alike within each version: the standard error sits at the test's floor and z
      // is its artefact (−182321.6 for equal token counts), so say so, as the event's summary and
      // the console do (docs/canary-statistics.md; trial t121 read "z=-182321.6 ≤ 5.76" here).
      String z = t.standardError() != null && t.standardError() <= NO_VARIANCE_SE
          ? "no variance, " + (degraded ? "beyond" : "within") + " the tolerance"
          : String.format(Locale.ROOT, "z=%.1f %s %.2f", t.statistic(), beyond ? ">" : "≤", t.criticalValue());
      b.append(b.length() == 0 ? "; " : ", ").append(String.format(Locale.ROOT,
          "%s %s vs stable %s (n=%,d / %,d, %s)", label(t.metric()), value(t.metric(), t.candidateValue()),
          value(t.metric(), t.stableValue()), t.candidateSamples(), t.stableSamples(), z));
      if (t.pValue() != null) {
        // Sequential test (issue #19): the always-valid p-value, its level and the looks so far.
        b.setLength(b.length() - 1);
        b.append(String.format(Locale.ROOT, ", always-valid p=%.2g vs α=%.2g at look %,d)", t.pValue(),
            t.alpha(), t.looks()));
      }
    }
    return b.toString();
  }

  private static String label(Metric m) {
    return switch (m) {
      case TASK_SUCCESS_RATE -> "success rate";
      case USER_SATISFACTION -> "user satisfaction";
      case RESPONSE_LATENCY -> "p95 latency";
      case UPSTREAM_ERROR_RATE -> "upstream error rate (guardrail)";
      case TOKENS_PER_SESSION -> "tokens per session (guardrail)";
    };
  }

  private static String value(Metric m, double v) {
    if (m == Metric.TOKENS_PER_SESSION) {
      return String.format(Locale.ROOT, "%.0f tokens", v);
    }
    return m == Metric.RESPONSE_LATENCY ? String.format(Locale.ROOT, "%.0f ms", v) : String.format(Locale.ROOT, "%.2f", v);
  }

  static String pct(double ratio) {
    double p = ratio * 100;
    return p == Math.rint(p) ? String.format(Locale.ROOT, "%.0f%%", p) : String.format(Locale.ROOT, "%.1f%%", p);
  }

  static String group(long n) {
    return String.format(Locale.ROOT, "%,d", n);
  }

  private static String num(Double d) {
    return d == null ? "-" : String.format(Locale.ROOT, "%.2f", d);
  }

  /** The inference gateway stored a text cut at max-text-length: the timeline says so, with its length before. */
  private static String cut(java.util.Map<String, Integer> truncated) {
    if (truncated == null || truncated.isEmpty()) return "";
    StringBuilder b = new StringBuilder(" [cut:");
    truncated.forEach((field, length) -> b.append(' ').append(field).append(" was ").append(length).append(" characters"));
    return b.append(']').toString();
  }

  private static String clip(String s) {
    if (s == null) return "";
    String one = s.replace('\n', ' ');
    // Never half a surrogate pair: an emoji at the cut was printed as '?' (trial t102).
    return one.length() > 100 ? io.otl.core.session.TextPrefixes.prefix(one, 100) + "…" : one;
  }
}
