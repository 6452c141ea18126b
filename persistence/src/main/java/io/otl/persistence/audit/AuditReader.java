package io.otl.persistence.audit;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jdk8.Jdk8Module;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;
import com.typesafe.config.Config;
import io.otl.core.Ids;
import io.otl.core.SettingsOverlay;
import io.otl.core.api.AuditLog;
import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.coordinator.TrainingPolicy;
import io.otl.core.model.ModelSettings;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.AgentSession;
import io.otl.persistence.JournalRows;
import io.otl.wire.Views;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;

/**
 * The audit read of the journal (design §1, §7.1, §7.4). It never writes and never talks to the
 * live entities, so reading the history of a busy entity does not disturb it.
 *
 * <h2>Reading</h2>
 * An entity's events are read straight from the journal table ({@link JournalRows}: one {@code
 * SELECT} per window of 500 rows, decoded as pekko-persistence-jdbc's read journal decodes them,
 * at a fraction of its per-query cost); every stage is a stream with back-pressure, so a history of
 * a million events is read in constant memory, one window at a time. A page stops reading as soon
 * as it has its events. The journal verifier still reads through the read journal
 * ({@link #rawEvents}, {@link #window}): it checks what pekko's own queries would trip on.
 *
 * <h2>Time</h2>
 * Each event is placed in time by when the system knew it: a session event by its {@code
 * recordedAt} (the server's clock; its {@code at} is the client's and may be in the past or the
 * future), coordinator and model events by their {@code at} (the entity's clock when it decided),
 * anything else by the journal's write time. "As of T" means the events known at T: the journal is
 * read from the first event and stops at the first event known after T, so the result is always a
 * state the entity really had. Pages list {@code at} as the event's own {@code at}.
 *
 * <h2>State as of T</h2>
 * Replayed from the entity's first event (sequence number 1) with the entity's own pure event
 * handler: {@link AgentSession.State#apply}, {@link TrainingCoordinator#applyEvent}, {@link
 * ModelVersion#applyEvent}. Snapshots are deliberately not used, since the newest snapshot may
 * be later than T: the cost is one full read of the entity's journal per request (about what a
 * recovery without snapshots costs, linear in the number of events), which is acceptable on the
 * audit path and never touches the live entity. A job's state is its view in its coordinator's
 * state as of T.
 */
public final class AuditReader implements AuditLog {
  /** Sequence numbers per read-journal query (pekko-persistence-jdbc's max-buffer-size). */
  static final long WINDOW = 500;
  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(AuditReader.class);

  /** Events as JSON: java.time as ISO-8601 strings. */
  public static final ObjectMapper JSON = new ObjectMapper()
      .registerModule(new JavaTimeModule())
      .registerModule(new Jdk8Module())
      .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
      .disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);

  private final ActorSystem<?> system;
  private final JdbcReadJournal journal;
  private final JournalRows rows;
  private final Function<String, SettingsOverlay.Resolver<ModelSettings>> rollouts;
  private final Function<String, SettingsOverlay.Resolver<TrainingPolicy>> policies;

  /**
   * One set of settings for every agent, run-time overrides not applied (readers without the node's
   * per-agent configuration, such as tests of one agent on the file's settings).
   *
   * @param system an actor system whose configuration has the jdbc-read-journal plugin (the node's,
   *     or {@code OfflineJournal}'s)
   * @param modelSettings for the model view's step deadlines (as GET /v1/models answers)
   * @param policy the coordinator's configuration, for the configured fields of the coordinator
   *     view; null leaves them out
   */
  public AuditReader(ActorSystem<?> system, ModelSettings modelSettings, TrainingPolicy policy) {
    this(system, fixed(Objects.requireNonNull(modelSettings, "modelSettings")),
        policy == null ? null : fixed(policy));
  }

  private static <T> Function<String, SettingsOverlay.Resolver<T>> fixed(T settings) {
    return agentId -> overrides -> settings;
  }

  /**
   * A reader that shows each agent's settings as its entities used them: the agent's own section of
   * the file with the run-time overrides ({@code PUT …/policy}) in force at the time asked about, as
   * the live GETs show them ({@code minSamples} 30 after a PUT of {@code trigger.min-samples}, not
   * the file's 1000; a step deadline from the run-time {@code step-duration}).
   *
   * @param rollouts the agent's model-update settings from its run-time overrides
   * @param policies the agent's training policy from its run-time overrides; null leaves the
   *     configured fields of the coordinator view out
   */
  public AuditReader(ActorSystem<?> system, Function<String, SettingsOverlay.Resolver<ModelSettings>> rollouts,
      Function<String, SettingsOverlay.Resolver<TrainingPolicy>> policies) {
    this.system = Objects.requireNonNull(system, "system");
    this.rollouts = Objects.requireNonNull(rollouts, "rollouts");
    this.policies = policies;
    this.journal = PersistenceQuery.get(system).getReadJournalFor(JdbcReadJournal.class, JdbcReadJournal.Identifier());
    this.rows = JournalRows.get(system);
  }

  /** Reads the model and training settings from the {@code agentscope.training} section. */
  public static AuditReader fromConfig(ActorSystem<?> system, Config training) {
    return new AuditReader(system, ModelSettings.fromConfig(training), TrainingPolicy.fromConfig(training));
  }

  // ------------------------------------------------------------------------------------------
  // Ids
  // ------------------------------------------------------------------------------------------

  /** The persistence id whose journal holds {@code id}'s events; throws for an invalid id. */
  public static String persistenceId(Kind kind, String id) {
    checkId(kind, id);
    return switch (kind) {
      case SESSION -> AgentSession.persistenceId(id).id();
      case COORDINATOR -> TrainingCoordinator.persistenceId(id).id();
      case MODEL -> ModelVersion.ENTITY_TYPE_KEY.name() + "|" + id;
      case JOB -> TrainingCoordinator.persistenceId(TrainingCoordinator.agentIdOf(id).orElseThrow()).id();
    };
  }

  /** The persistence-id prefix of a kind's entities (a job lives in its coordinator's journal). */
  public static String prefix(Kind kind) {
    return switch (kind) {
      case SESSION -> AgentSession.ENTITY_TYPE_KEY.name() + "|";
      case COORDINATOR, JOB -> TrainingCoordinator.ENTITY_TYPE_KEY.name() + "|";
      case MODEL -> ModelVersion.ENTITY_TYPE_KEY.name() + "|";
    };
  }

  /** @throws IllegalArgumentException naming what is wrong with {@code id} */
  public static void checkId(Kind kind, String id) {
    String problem = switch (kind) {
      case SESSION -> Ids.problem("sessionId", id, Ids.MAX_SESSION_ID);
      case COORDINATOR, MODEL -> Ids.problem("agentId", id, Ids.MAX_AGENT_ID);
      case JOB -> TrainingCoordinator.agentIdOf(id).isPresent() ? null
          : "jobId '" + id + "' is not a job id (job-<n>-<agentId>)";
    };
    if (problem != null) throw new IllegalArgumentException(problem);
  }

  // ------------------------------------------------------------------------------------------
  // Events
  // ------------------------------------------------------------------------------------------

  /**
   * The events of {@code persistenceId} from {@code fromSeqNr} on, read from the journal table in
   * windows ({@link JournalRows#rows}): constant memory whatever the length. An event that cannot be
   * deserialized becomes an {@link UnreadableEvent} (logged with its ids), so a poisoned event never
   * fails an audit; database failures still fail.
   */
  public Source<EventEnvelope, NotUsed> events(String persistenceId, long fromSeqNr) {
    return rows.rows(persistenceId, fromSeqNr).mapConcat(r -> {
      if (r.failure() == null) return r.envelopes();
      UnreadableEvent u = UnreadableEvent.of(r.sequenceNr(), r.failure());
      log.warn("{} seqNr {}: {}", persistenceId, r.sequenceNr(), u.reason());
      return List.of(new EventEnvelope(org.apache.pekko.persistence.query.Offset.noOffset(), persistenceId,
          r.sequenceNr(), u, 0L, scala.Option.empty()));
    });
  }

  /**
   * The events through the read journal, up to the highest sequence number at the start, in windows
   * of {@link #WINDOW}; raw: an undeserializable event fails the stream (the verifier wants to find
   * those).
   */
  Source<EventEnvelope, NotUsed> rawEvents(String persistenceId, long fromSeqNr) {
    return Source.completionStage(journal.currentLastSequenceNumberByPersistenceId(persistenceId))
        .flatMapConcat(last -> {
          long to = last.orElse(0L);
          return Source.unfold(Math.max(1, fromSeqNr), from -> from > to
                  ? Optional.<Pair<Long, Long>>empty()
                  : Optional.of(Pair.create(from + WINDOW, from)))
              .flatMapConcat(from -> journal.currentEventsByPersistenceId(
                  persistenceId, from, Math.min(to, from + WINDOW - 1)));
        });
  }

  /** Every persistence id in the journal that starts with {@code prefix}. */
  public Source<String, NotUsed> persistenceIds(String prefix) {
    return journal.currentPersistenceIds().filter(pid -> pid.startsWith(prefix));
  }

  /** One window of a journal, for callers that probe sequence numbers themselves (verify). */
  Source<EventEnvelope, NotUsed> window(String persistenceId, long from, long to) {
    return journal.currentEventsByPersistenceId(persistenceId, from, to);
  }

  CompletionStage<Long> lastSeqNr(String persistenceId) {
    return journal.currentLastSequenceNumberByPersistenceId(persistenceId).thenApply(o -> o.orElse(0L));
  }

  ActorSystem<?> system() {
    return system;
  }

  /** When the system knew the event (see the class comment). */
  public static Instant knownAt(EventEnvelope env) {
    Object e = env.event();
    Instant t = null;
    if (e instanceof AgentSession.Event s) {
      t = s.recordedAt() != null ? s.recordedAt() : s.at();
    } else if (e instanceof TrainingCoordinator.Event c) {
      t = c.at();
    } else if (e instanceof ModelVersion.Event m) {
      t = m.at();
    }
    return t != null ? t : Instant.ofEpochMilli(env.timestamp());
  }

  /** The event's own {@code at}, else the journal's write time. */
  public static Instant at(EventEnvelope env) {
    Object e = env.event();
    Instant t = null;
    if (e instanceof AgentSession.Event s) {
      t = s.at();
    } else if (e instanceof TrainingCoordinator.Event c) {
      t = c.at();
    } else if (e instanceof ModelVersion.Event m) {
      t = m.at();
    }
    return t != null ? t : Instant.ofEpochMilli(env.timestamp());
  }

  /** Deeper events are shown as a placeholder: the answer around them must still fit Jackson's write limit (1000). */
  static final int MAX_RENDERED_DEPTH = 900;

  public static Entry entry(EventEnvelope env) {
    String type = env.event().getClass().getSimpleName();
    com.fasterxml.jackson.databind.JsonNode tree;
    try {
      tree = JSON.valueToTree(env.event());
    } catch (RuntimeException e) {
      log.warn("{} seqNr {}: the event cannot be rendered ({}); shown as a placeholder", env.persistenceId(),
          env.sequenceNr(), UnreadableEvent.rootCause(e).getClass().getSimpleName());
      return new Entry(env.sequenceNr(), at(env), "UnreadableEvent", JSON.valueToTree(new UnreadableEvent(
          env.sequenceNr(), "the " + type + " cannot be rendered (" + UnreadableEvent.rootCause(e).getClass().getSimpleName() + ")")));
    }
    if (depth(tree, 0) > MAX_RENDERED_DEPTH) {
      log.warn("{} seqNr {}: the {} is nested deeper than {} levels; shown as a placeholder", env.persistenceId(),
          env.sequenceNr(), type, MAX_RENDERED_DEPTH);
      return new Entry(env.sequenceNr(), at(env), "UnreadableEvent", JSON.valueToTree(new UnreadableEvent(
          env.sequenceNr(), "the " + type + " is nested deeper than " + MAX_RENDERED_DEPTH + " levels; not shown")));
    }
    return new Entry(env.sequenceNr(), at(env), type, tree);
  }

  private static int depth(com.fasterxml.jackson.databind.JsonNode n, int d) {
    if (!n.isContainerNode()) return d;
    int max = d + 1;
    for (com.fasterxml.jackson.databind.JsonNode c : n) {
      max = Math.max(max, depth(c, d + 1));
      if (max > MAX_RENDERED_DEPTH) return max;
    }
    return max;
  }

  private static boolean ofJob(EventEnvelope env, String jobId) {
    return env.event() instanceof TrainingCoordinator.JobEvent je && jobId.equals(je.jobId());
  }

  // ------------------------------------------------------------------------------------------
  // Pages
  // ------------------------------------------------------------------------------------------

  @Override
  public CompletionStage<Page> page(Kind kind, String id, long afterSeqNr, int limit, Instant until) {
    try {
      if (afterSeqNr < 0) throw new IllegalArgumentException("after must be a sequence number >= 0, was " + afterSeqNr);
      if (limit < 1 || limit > MAX_LIMIT) {
        throw new IllegalArgumentException("limit must be from 1 to " + MAX_LIMIT + ", was " + limit);
      }
      String pid = persistenceId(kind, id);
      Source<EventEnvelope, NotUsed> s = events(pid, afterSeqNr + 1);
      if (until != null) s = s.takeWhile(env -> !knownAt(env).isAfter(until));
      if (kind == Kind.JOB) s = s.filter(env -> ofJob(env, id));
      return s.take(limit + 1L).runWith(Sink.seq(), system).thenCompose(list -> {
        boolean more = list.size() > limit;
        List<Entry> entries = new ArrayList<>(Math.min(list.size(), limit));
        for (int i = 0; i < list.size() && i < limit; i++) entries.add(entry(list.get(i)));
        Long next = more ? entries.get(entries.size() - 1).seqNr() : null;
        Page page = new Page(kind.wire(), id, List.copyOf(entries), next);
        if (!entries.isEmpty() || afterSeqNr > 0) return CompletableFuture.completedFuture(page);
        return notFound(kind, id, until);
      });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Fails with the right NotFound: unknown entity, or one that did not exist yet at {@code asOf}. */
  private <T> CompletionStage<T> notFound(Kind kind, String id, Instant asOf) {
    String pid = persistenceId(kind, id);
    Source<EventEnvelope, NotUsed> s = events(pid, 1);
    if (kind == Kind.JOB) s = s.filter(env -> ofJob(env, id));
    return s.take(1).runWith(Sink.headOption(), system).thenCompose(first -> {
      // An id holding an API key is named by its digest, as the session routes name it (trial t167).
      String shown = io.otl.core.Ids.shown(id);
      String what = kind.wire() + " " + shown;
      if (first.isEmpty()) {
        return CompletableFuture.failedFuture(new NotFound(switch (kind) {
          case SESSION -> what + " is unknown: the journal has no event of it";
          case COORDINATOR -> "agent " + shown + " has no training coordinator in the journal";
          case MODEL -> "agent " + shown + " has no model versions in the journal";
          case JOB -> what + " is unknown: its coordinator's journal has no event of it";
        }));
      }
      return CompletableFuture.failedFuture(new NotFound(what + " did not exist at " + asOf
          + ": its first event was recorded at " + knownAt(first.get())));
    });
  }

  // ------------------------------------------------------------------------------------------
  // State as of T
  // ------------------------------------------------------------------------------------------

  private record Acc<S>(S state, long count) {}

  /** Folds the entity's events known at {@code asOf} from its first event, in constant memory. */
  private <S, E> CompletionStage<Acc<S>> fold(
      String pid, Instant asOf, S empty, Class<E> eventType, BiFunction<S, E, S> handler) {
    return events(pid, 1)
        .filter(env -> !(env.event() instanceof UnreadableEvent))
        .takeWhile(env -> asOf == null || !knownAt(env).isAfter(asOf))
        .runFold(new Acc<>(empty, 0), (acc, env) -> {
          Object e = env.event();
          if (!eventType.isInstance(e)) {
            throw new IllegalStateException(pid + " seqNr " + env.sequenceNr() + " holds a "
                + e.getClass().getName() + ", not a " + eventType.getName());
          }
          return new Acc<>(handler.apply(acc.state(), eventType.cast(e)), acc.count() + 1);
        }, system);
  }

  /** The session state as of {@code asOf} (null: now), through {@link AgentSession.State#apply}. */
  public CompletionStage<AgentSession.State> sessionState(String sessionId, Instant asOf) {
    String pid = persistenceId(Kind.SESSION, sessionId);
    return fold(pid, asOf, AgentSession.State.empty(), AgentSession.Event.class, AgentSession.State::apply)
        .thenCompose(acc -> acc.count() == 0 ? notFound(Kind.SESSION, sessionId, asOf)
            : CompletableFuture.completedFuture(acc.state()));
  }

  /** The coordinator state as of {@code asOf} (null: now), through {@link TrainingCoordinator#applyEvent}. */
  public CompletionStage<TrainingCoordinator.State> coordinatorState(String agentId, Instant asOf) {
    String pid = persistenceId(Kind.COORDINATOR, agentId);
    return fold(pid, asOf, TrainingCoordinator.State.EMPTY, TrainingCoordinator.Event.class,
            TrainingCoordinator::applyEvent)
        .thenCompose(acc -> acc.count() == 0 ? notFound(Kind.COORDINATOR, agentId, asOf)
            : CompletableFuture.completedFuture(acc.state()));
  }

  /** The model versions' state as of {@code asOf} (null: now), through {@link ModelVersion#applyEvent}. */
  public CompletionStage<ModelVersion.State> modelState(String agentId, Instant asOf) {
    String pid = persistenceId(Kind.MODEL, agentId);
    return fold(pid, asOf, ModelVersion.initialState(), ModelVersion.Event.class, ModelVersion::applyEvent)
        .thenCompose(acc -> acc.count() == 0 ? notFound(Kind.MODEL, agentId, asOf)
            : CompletableFuture.completedFuture(acc.state()));
  }

  /** The settings {@code overrides} made, as the live entity resolves them (it logs a refusal; a reader need not). */
  private static <T> T inForce(SettingsOverlay.Resolver<T> resolver, Map<String, Object> overrides) {
    return SettingsOverlay.inForce(resolver, overrides, refused -> { });
  }

  @Override
  public CompletionStage<Object> stateAsOf(Kind kind, String id, Instant asOf) {
    try {
      Objects.requireNonNull(asOf, "asOf");
      return switch (kind) {
        case SESSION -> sessionState(id, asOf).thenApply(s -> Views.session(id, s));
        case COORDINATOR -> {
          // a future time is the current state, so its next run is the one named now
          Instant now = Instant.now();
          Instant at = asOf.isAfter(now) ? now : asOf;
          yield coordinatorState(id, asOf).thenApply(s -> Views.coordinator(id, s,
              policies == null ? null : inForce(policies.apply(id),
                  s.policyChange() == null ? Map.of() : s.policyChange().overrides()), at));
        }
        case MODEL -> modelState(id, asOf).thenApply(s -> ModelVersion.view(id, s, inForce(rollouts.apply(id),
            s.models().policyChange() == null ? Map.of() : s.models().policyChange().overrides()).stepDuration()));
        case JOB -> {
          String agentId = TrainingCoordinator.agentIdOf(id).orElseThrow(
              () -> new IllegalArgumentException("jobId '" + id + "' is not a job id (job-<n>-<agentId>)"));
          yield coordinatorState(agentId, asOf)
              .exceptionallyCompose(e -> unwrap(e) instanceof NotFound ? notFound(Kind.JOB, id, asOf)
                  : CompletableFuture.failedFuture(e))
              .thenCompose(s -> s.job(id)
                  .<CompletionStage<Object>>map(j -> CompletableFuture.completedFuture(
                      TrainingCoordinator.jobView(agentId, j)))
                  .orElseGet(() -> notFound(Kind.JOB, id, asOf)));
        }
      };
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  // ------------------------------------------------------------------------------------------
  // Lineage
  // ------------------------------------------------------------------------------------------

  /**
   * The jobs {@code jobIds} of {@code agentId}, from their own events in the coordinator's journal
   * folded with {@link TrainingCoordinator#applyEvent} (a job's record depends only on its own
   * events). {@code jobIds} may grow while the journal is read ({@code admit} adds a job when it
   * sees its JobRequested), which is how a session's jobs are found in one pass.
   */
  private CompletionStage<TrainingCoordinator.State> jobs(
      String agentId, Set<String> jobIds, java.util.function.Predicate<TrainingCoordinator.JobRequested> admit) {
    String pid = TrainingCoordinator.persistenceId(agentId).id();
    return events(pid, 1)
        .filter(env -> env.event() instanceof TrainingCoordinator.JobEvent)
        .runFold(TrainingCoordinator.State.EMPTY, (s, env) -> {
          TrainingCoordinator.JobEvent je = (TrainingCoordinator.JobEvent) env.event();
          if (je instanceof TrainingCoordinator.JobRequested r && admit.test(r)) jobIds.add(r.jobId());
          // a job's ProxyModelObserved is replayed too: its hand-over names the job's proxy candidate
          if (je.jobId() == null || !jobIds.contains(je.jobId())) {
            return s;
          }
          return TrainingCoordinator.applyEvent(s, je);
        }, system);
  }

  /** The ids of the jobs that took {@code sessionId} from the pool or wrote it into their dataset, in order. */
  private CompletionStage<Set<String>> jobsNaming(String agentId, String sessionId) {
    String pid = TrainingCoordinator.persistenceId(agentId).id();
    return events(pid, 1).runFold((Set<String>) new java.util.LinkedHashSet<String>(), (ids, env) -> {
      if (env.event() instanceof TrainingCoordinator.JobRequested r && r.sessionIds().contains(sessionId)) {
        ids.add(r.jobId());
      } else if (env.event() instanceof TrainingCoordinator.DatasetExported d
          && d.manifest().sessionIds().contains(sessionId)) {
        ids.add(d.jobId());
      }
      return ids;
    }, system);
  }

  private static JobLineage lineage(String agentId, TrainingCoordinator.Job j) {
    return new JobLineage(j.jobId(), agentId, j.status(), j.requestedAt(), j.sessionIds(), j.manifest(),
        j.candidateVersion() != null ? j.candidateVersion() : j.proxyCandidate());
  }

  @Override
  public CompletionStage<JobLineage> jobLineage(String jobId) {
    try {
      checkId(Kind.JOB, jobId);
      String agentId = TrainingCoordinator.agentIdOf(jobId).orElseThrow();
      Set<String> ids = new HashSet<>(Set.of(jobId));
      return jobs(agentId, ids, r -> false).thenCompose(s -> s.job(jobId)
          .<CompletionStage<JobLineage>>map(j -> CompletableFuture.completedFuture(lineage(agentId, j)))
          .orElseGet(() -> notFound(Kind.JOB, jobId, null)));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<ModelLineage> modelLineage(String agentId, String version) {
    try {
      checkId(Kind.MODEL, agentId);
      return modelState(agentId, null).thenCompose(state -> {
        List<ModelVersion.VersionRecord> versions = new ArrayList<>();
        for (ModelVersion.VersionRecord v : state.models().versions()) {
          if (version == null || v.version().equals(version)) versions.add(v);
        }
        if (versions.isEmpty()) {
          return CompletableFuture.<ModelLineage>failedFuture(
              new NotFound("version " + version + " of agent " + agentId + " is not in the journal"));
        }
        Map<String, Set<String>> jobsByAgent = new LinkedHashMap<>();
        for (ModelVersion.VersionRecord v : versions) {
          if (v.sourceJobId() == null) continue;
          TrainingCoordinator.agentIdOf(v.sourceJobId()).ifPresent(a ->
              jobsByAgent.computeIfAbsent(a, k -> new HashSet<>()).add(v.sourceJobId()));
        }
        Map<String, JobLineage> found = new java.util.concurrent.ConcurrentHashMap<>();
        CompletableFuture<Void> all = CompletableFuture.completedFuture(null);
        for (Map.Entry<String, Set<String>> e : jobsByAgent.entrySet()) {
          all = all.thenCompose(x -> jobs(e.getKey(), e.getValue(), r -> false).thenAccept(s -> {
            for (TrainingCoordinator.Job j : s.jobs()) found.put(j.jobId(), lineage(e.getKey(), j));
          }).toCompletableFuture());
        }
        return all.thenApply(x -> new ModelLineage(agentId, versions.stream()
            .map(v -> new VersionLineage(v.version(), v.state().name(), v.manual(), v.artifact(), v.sourceJobId(),
                v.sourceJobId() == null ? null : found.get(v.sourceJobId())))
            .toList()));
      });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  @Override
  public CompletionStage<SessionLineage> sessionLineage(String sessionId) {
    try {
      String pid = persistenceId(Kind.SESSION, sessionId);
      return events(pid, 1).take(1).runWith(Sink.headOption(), system).thenCompose(first -> {
        if (first.isEmpty()) return notFound(Kind.SESSION, sessionId, null);
        if (!(first.get().event() instanceof AgentSession.SessionStarted started)) {
          return CompletableFuture.failedFuture(new IllegalStateException(
              pid + " does not start with SessionStarted but with " + first.get().event().getClass().getSimpleName()));
        }
        String agentId = started.agentId();
        // Two passes: a later job may replay the session from an earlier job's data (its export, not
        // its request, names it), and its request comes before that export in the journal. Read only
        // from the request, such a job was missing, and the lineage hid a model the session trained.
        return jobsNaming(agentId, sessionId).thenCompose(jobIds -> jobs(agentId, jobIds, r -> false).thenCompose(s -> {
          if (jobIds.isEmpty()) {
            return CompletableFuture.completedFuture(new SessionLineage(sessionId, agentId, List.of()));
          }
          return versionsFrom(agentId, jobIds).thenApply(byJob -> {
            List<SessionJob> out = new ArrayList<>();
            for (String jobId : jobIds) {
              s.job(jobId).ifPresent(j -> {
                boolean inDataset = j.manifest() != null && j.manifest().sessionIds().contains(sessionId);
                boolean heldOut = j.manifest() != null && j.manifest().lineage() != null
                    && j.manifest().lineage().evalSessionIds().contains(sessionId);
                // The reason the export recorded for it (null in the dataset, or in a manifest of an earlier build).
                String excludedFor = inDataset || j.manifest() == null ? null : j.manifest().exclusionOf(sessionId);
                out.add(new SessionJob(j.jobId(), j.status(), inDataset, j.candidateVersion() != null ? j.candidateVersion() : j.proxyCandidate(),
                    byJob.getOrDefault(jobId, List.of()), inDataset && !j.sessionIds().contains(sessionId), heldOut,
                    excludedFor));
              });
            }
            return new SessionLineage(sessionId, agentId, List.copyOf(out));
          });
        }));
      });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** Model versions of {@code agentId} registered from one of {@code jobIds}, by job. */
  private CompletionStage<Map<String, List<String>>> versionsFrom(String agentId, Set<String> jobIds) {
    String pid = ModelVersion.ENTITY_TYPE_KEY.name() + "|" + agentId;
    return events(pid, 1)
        .filter(env -> env.event() instanceof ModelVersion.VersionRegistered r && r.sourceJobId() != null
            && jobIds.contains(r.sourceJobId()))
        .runFold(new LinkedHashMap<String, List<String>>(), (m, env) -> {
          ModelVersion.VersionRegistered r = (ModelVersion.VersionRegistered) env.event();
          m.computeIfAbsent(r.sourceJobId(), k -> new ArrayList<>()).add(r.version());
          return m;
        }, system)
        .thenApply(m -> m);
  }

  /** The cause of a failed stage. */
  public static Throwable unwrap(Throwable t) {
    while ((t instanceof java.util.concurrent.CompletionException || t instanceof java.util.concurrent.ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
