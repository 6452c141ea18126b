package io.otl.core.model;

import io.otl.core.entity.Plan;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelEvents.OutcomeRecorded;
import io.otl.core.model.ModelEvents.RolloutPaused;
import io.otl.core.model.ModelEvents.RolloutResumed;
import io.otl.core.model.ModelEvents.VersionPromoted;
import io.otl.core.model.ModelEvents.VersionRolledBack;
import io.otl.core.model.ModelProtocol.Disposition;
import io.otl.core.model.ModelProtocol.Failure;
import io.otl.core.model.ModelProtocol.OutcomeAck;
import io.otl.core.model.ModelProtocol.Pause;
import io.otl.core.model.ModelProtocol.RecordOutcome;
import io.otl.core.model.ModelProtocol.Resume;
import io.otl.core.model.ModelProtocol.TransitionReply;
import io.otl.core.model.ModelState.Idle;
import io.otl.core.model.ModelState.RollingOut;
import io.otl.core.model.ModelState.Rollout;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionRecord;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;

/**
 * ModelVersion's commands during a rollout: pause, resume, the sessions' outcomes and the step
 * timer (and their answers outside a rollout). The step rule itself is {@link RolloutPlanner}'s.
 */
final class RolloutCommands {

  private final Supplier<ModelSettings> settings;
  private final Clock clock;
  private final RolloutPlanner rollouts;
  private final ModelWrites writes;

  RolloutCommands(Supplier<ModelSettings> settings, Clock clock, RolloutPlanner rollouts, ModelWrites writes) {
    this.settings = settings;
    this.clock = clock;
    this.rollouts = rollouts;
    this.writes = writes;
  }

  ReplyEffect<Event, State> pause(RollingOut s, Pause c) {
    Optional<VersionRecord> found = s.models().find(c.version());
    if (found.isEmpty()) {
      return writes.reply(c.replyTo(), Failure.notFound(c.version()));
    }
    VersionRecord v = found.get();
    if (!v.version().equals(s.rollout().candidate())) {
      return writes.reply(c.replyTo(), Failure.invalidTransition("pause", v));
    }
    if (s.rollout().paused()) {
      return writes.reply(c.replyTo(), writes.status(s, v.version(), false, List.of("already paused")));
    }
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    p.add(new RolloutPaused(v.version(), false, "manual pause", List.of(), clock.instant(), c.actor()));
    return writes.persist(p, c.replyTo(), st -> writes.status(st, c.version(), false, List.of()));
  }

  ReplyEffect<Event, State> resume(RollingOut s, Resume c) {
    Optional<VersionRecord> found = s.models().find(c.version());
    if (found.isEmpty()) {
      return writes.reply(c.replyTo(), Failure.notFound(c.version()));
    }
    VersionRecord v = found.get();
    if (!v.version().equals(s.rollout().candidate())) {
      return writes.reply(c.replyTo(), Failure.invalidTransition("resume", v));
    }
    if (!s.rollout().paused()) {
      return writes.reply(c.replyTo(), writes.status(s, v.version(), false, List.of("not paused")));
    }
    Instant now = clock.instant();
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    p.add(new RolloutResumed(v.version(), now, c.actor()));
    rollouts.evaluate(p, now);
    // The resume is itself a step check: the tests may pause (or roll back) the candidate again at
    // once. The reply says why, or the operator saw 202 "PAUSED" with no reason (trial t74).
    List<String> reasons = p.events().stream().map(RolloutCommands::transitionReason)
        .flatMap(Optional::stream).toList();
    return writes.persist(p, c.replyTo(), st -> writes.status(st, c.version(), false, reasons));
  }

  /** The reason of a decision that ends or holds a rollout; empty for any other event. */
  private static Optional<String> transitionReason(Event e) {
    if (e instanceof RolloutPaused x) return Optional.of(x.reason());
    if (e instanceof VersionRolledBack x) return Optional.of(x.reason());
    if (e instanceof VersionPromoted x) return Optional.of(x.reason());
    return Optional.empty();
  }

  /** Pause or resume without a rollout: the version is unknown or not in rollout. */
  ReplyEffect<Event, State> refuseOutsideRollout(
      State s, String version, String verb, ActorRef<TransitionReply> replyTo) {
    TransitionReply refusal = s.models().find(version)
        .<TransitionReply>map(v -> Failure.invalidTransition(verb, v))
        .orElseGet(() -> Failure.notFound(version));
    return writes.reply(replyTo, refusal);
  }

  ReplyEffect<Event, State> outcomeWithoutRollout(Idle s, RecordOutcome c) {
    Optional<String> invalid = ModelValidation.outcome(c);
    if (invalid.isPresent()) {
      return writes.reply(c.replyTo(), Failure.invalidInput(invalid.get()));
    }
    return writes.reply(c.replyTo(), new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.IGNORED,
        "no rollout in progress: outcomes are measured only for a candidate in rollout and for the "
            + "stable during that rollout"));
  }

  ReplyEffect<Event, State> recordOutcome(RollingOut s, RecordOutcome c) {
    Optional<String> invalid = ModelValidation.outcome(c);
    if (invalid.isPresent()) {
      return writes.reply(c.replyTo(), Failure.invalidInput(invalid.get()));
    }
    Rollout r = s.rollout();
    SessionSet seen;
    if (c.modelVersion().equals(r.candidate())) {
      seen = r.candidateSessions();
    } else if (c.modelVersion().equals(r.stableVersion())) {
      seen = r.stableSessions();
    } else {
      String detail = s.models().find(c.modelVersion()).isPresent()
          ? c.modelVersion() + " is neither the candidate " + r.candidate() + " nor the stable "
              + r.stableVersion() + "; not measured"
          : "unknown version " + c.modelVersion() + "; not measured";
      return writes.reply(c.replyTo(), new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.IGNORED, detail));
    }
    if (c.isRevision()) return revisedOutcome(s, c, seen);
    Instant started = s.rolloutStartedAt();
    if (c.completedAt() != null && started != null && c.completedAt().isBefore(started)) {
      return writes.reply(c.replyTo(), new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.IGNORED,
          "session " + c.sessionId() + " completed at " + c.completedAt() + ", before the rollout of "
              + r.candidate() + " began at " + started + "; not measured"));
    }
    if (seen.contains(c.sessionId())) {
      return writes.reply(c.replyTo(), new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.DUPLICATE,
          "session " + c.sessionId() + " was already counted for " + c.modelVersion()));
    }
    Instant now = clock.instant();
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    p.add(new OutcomeRecorded(c.sessionId(), c.modelVersion(), c.success(), c.rating(),
        c.thumbsUp(), c.thumbsDown(), c.latencyP95Ms(), now, c.modelCalls(), c.upstreamErrors(), c.tokens(),
        c.sessionStartedAt()));
    rollouts.evaluate(p, now);
    OutcomeAck ack = new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.RECORDED, "recorded");
    return writes.persist(p, c.replyTo(), st -> ack);
  }

  /**
   * Feedback that came after a counted session's outcome: its satisfaction score, the first it has,
   * joins the figures (a rating sent after the result was never measured). Anything else of a
   * revision is already counted or, for a session this rollout did not count, not measured.
   */
  private ReplyEffect<Event, State> revisedOutcome(RollingOut s, RecordOutcome c, SessionSet seen) {
    String why = !seen.contains(c.sessionId()) ? "session " + c.sessionId() + " was not counted in this rollout"
        : seen.containsScored(c.sessionId(), s.rollout().marksKept()) ? "the satisfaction of session " + c.sessionId() + " was already counted"
        : OutcomeAggregates.satisfactionScore(c.rating(), c.thumbsUp(), c.thumbsDown()) == null
            ? "the revision of session " + c.sessionId() + " has no rating or thumbs" : null;
    if (why != null) {
      return writes.reply(c.replyTo(), new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.DUPLICATE, why));
    }
    Instant now = clock.instant();
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    p.add(new ModelEvents.OutcomeRevised(c.sessionId(), c.modelVersion(), c.rating(), c.thumbsUp(), c.thumbsDown(),
        now));
    rollouts.evaluate(p, now);
    OutcomeAck ack = new OutcomeAck(c.sessionId(), c.modelVersion(), Disposition.RECORDED, "satisfaction recorded");
    return writes.persist(p, c.replyTo(), st -> ack);
  }

  ReplyEffect<Event, State> stepTick(RollingOut s) {
    Instant now = clock.instant();
    Rollout r = s.rollout();
    if (r.paused()) {
      return writes.noReply();
    }
    Instant deadline = r.stepStartedAt().plus(settings.get().stepDuration());
    if (now.isBefore(deadline)) {
      writes.scheduleStepTick(s, false);
      return writes.noReply();
    }
    Plan<State, Event> p = new Plan<>(s, ModelEventHandler::apply);
    rollouts.evaluate(p, now);
    if (p.isEmpty()) {
      // Deadline passed but too few samples: the next outcome re-evaluates; no busy re-ticking.
      return writes.noReply();
    }
    return writes.persistNoReply(p);
  }
}
