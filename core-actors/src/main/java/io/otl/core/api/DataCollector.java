package io.otl.core.api;

import io.otl.core.Ids;
import io.otl.core.session.AgentSession;
import io.otl.core.session.AgentSession.RecordReply;
import io.otl.core.session.AgentSession.Recorded;
import io.otl.core.session.AgentSession.Rejected;
import io.otl.core.session.SessionInput;
import io.otl.core.session.SessionModel.Status;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;

/**
 * Records what agents do (design §7.3). Every stage completes only after the session has written
 * the events to the journal, or fails: with {@link RecordRejectedException} when the input is
 * refused (nothing stored), or with a timeout when the journal did not answer in time.
 */
public final class DataCollector {
  private final ClusterSharding sharding;
  private final Duration askTimeout;

  private final KeyLikeIds keyLikeIds;
  private final StoredSessions storedSessions;

  public DataCollector(ClusterSharding sharding, Duration askTimeout) {
    this(sharding, askTimeout, KeyLikeIds.NONE);
  }

  /** @param keyLikeIds refuses new sessions and agents whose ids hold an API key, before the session is addressed */
  public DataCollector(ClusterSharding sharding, Duration askTimeout, KeyLikeIds keyLikeIds) {
    this(sharding, askTimeout, keyLikeIds, StoredSessions.NONE);
  }

  /**
   * @param storedSessions answers reads of unknown sessions, and refuses what a new session would refuse,
   *     before the session is addressed
   */
  public DataCollector(ClusterSharding sharding, Duration askTimeout, KeyLikeIds keyLikeIds,
      StoredSessions storedSessions) {
    this.sharding = sharding;
    this.askTimeout = askTimeout;
    this.keyLikeIds = keyLikeIds;
    this.storedSessions = storedSessions;
  }

  /** The raw reply, for edges (HTTP, Kafka) that map rejections themselves. */
  public CompletionStage<RecordReply> submit(String sessionId, String agentId, List<SessionInput> events) {
    return submit(sessionId, agentId, events, askTimeout);
  }

  /**
   * As {@link #submit(String, String, List)}, failing after {@code timeout} instead of the node's ask
   * timeout: for an edge that sends a timed-out write again itself (the session drops event ids it
   * already holds), so that a write lost with a dead node is resent sooner.
   */
  public CompletionStage<RecordReply> submit(String sessionId, String agentId, List<SessionInput> events,
      Duration timeout) {
    return submit(sessionId, agentId, events, null, null, timeout);
  }

  /**
   * A gateway's write named {@code writer}, stored only if the session's last gateway write is
   * {@code after} (null: unconditionally); else nothing is stored and the reply is
   * {@link AgentSession.Outdated} (see {@link AgentSession.Record}).
   */
  public CompletionStage<RecordReply> submit(String sessionId, String agentId, List<SessionInput> events,
      String writer, String after) {
    return submit(sessionId, agentId, events, writer, after, askTimeout);
  }

  private CompletionStage<RecordReply> submit(String sessionId, String agentId, List<SessionInput> events,
      String writer, String after, Duration timeout) {
    // A missing id cannot address a session: sharding would drop the message and the stage would
    // only fail with an ask timeout. Refused here, with the session's own rule and message.
    if (sessionId == null || sessionId.isEmpty()) {
      return CompletableFuture.completedFuture(new Rejected(AgentSession.RejectionCode.INVALID, "sessionId",
          Ids.problem("sessionId", sessionId, Ids.MAX_SESSION_ID)));
    }
    // Every door (HTTP, Kafka, OTLP, the gateway's recording, the Java API) writes through here.
    return keyLikeIds.forSession(sessionId, agentId).thenCompose(refused -> refused != null
        ? CompletableFuture.completedFuture(new Rejected(AgentSession.RejectionCode.INVALID, refused.field(),
            refused.message()))
        : refusedIfNew(sessionId, agentId, events, after).thenCompose(rejected -> rejected != null
            ? CompletableFuture.completedFuture(rejected)
            : record(sessionId, agentId, events, writer, after, timeout)));
  }

  private CompletionStage<RecordReply> record(String sessionId, String agentId, List<SessionInput> events,
      String writer, String after, Duration timeout) {
    CompletionStage<RecordReply> reply = sharding.entityRefFor(AgentSession.ENTITY_TYPE_KEY, sessionId)
        .ask(replyTo -> new AgentSession.Record(agentId, events, replyTo, writer, after), timeout);
    return reply.thenApply(r -> {
      if (r instanceof Recorded stored && stored.accepted() > 0) storedSessions.stored(sessionId);
      return r;
    });
  }

  /**
   * The refusal of a write the session would refuse and that the journal shows to be new, or null (the
   * session is to be asked): sharding journals the start of every session it addresses. A write numbered
   * after a gateway write ({@code after} not empty) is the session's to answer: a new one answers it outdated.
   */
  private CompletionStage<RecordReply> refusedIfNew(String sessionId, String agentId, List<SessionInput> events,
      String after) {
    if (after != null && !after.isEmpty()) return CompletableFuture.completedFuture(null);
    Rejected ifNew = storedSessions.refusalIfNew(sessionId, agentId, events);
    if (ifNew == null) return CompletableFuture.completedFuture(null);
    return storedSessions.mayBeStored(sessionId).thenApply(stored -> stored ? null : (RecordReply) ifNew);
  }

  /**
   * Records a batch atomically; fails with {@link RecordRejectedException} if it is refused. The inputs
   * are held to the wire doors' strict-JSON rules first ({@link EmbeddedInputRules}): no parser has seen
   * them, and the session stores what those rules would have refused.
   */
  public CompletionStage<Recorded> record(String sessionId, String agentId, List<SessionInput> events) {
    Rejected unstorable = EmbeddedInputRules.problem(events);
    if (unstorable != null) return CompletableFuture.failedFuture(new RecordRejectedException(unstorable));
    return submit(sessionId, agentId, events).thenCompose(DataCollector::accepted);
  }

  public CompletionStage<Recorded> record(String sessionId, String agentId, SessionInput... events) {
    // List.of threw a bare NullPointerException at the caller for a null event; the session refuses
    // it as it refuses any invalid input: a failed stage naming events[i].
    return record(sessionId, agentId, events == null ? null : Arrays.asList(events));
  }

  /**
   * Feedback on a session, also after it completed (within the feedback window). A refusal names the
   * parameter ({@code value}, {@code kind}), as HTTP's feedback body does, not {@code events[0].value}
   * of a batch the caller never built.
   */
  public CompletionStage<Recorded> feedback(
      String sessionId, String agentId, String kind, Double value, String feedbackId) {
    return feedback(sessionId, agentId, kind, value, feedbackId, null);
  }

  /**
   * As {@link #feedback(String, String, String, Double, String)}, on one answer: {@code msgId} is a
   * recorded assistant message's msgId (null: the whole session), as HTTP's feedback body takes it. Without
   * it, rating one answer from Java meant building a {@code SessionInput.Feedback} batch (trial t100).
   * An msgId the session has no answer with fails with kind NOT_FOUND, naming {@code msgId}.
   */
  public CompletionStage<Recorded> feedback(
      String sessionId, String agentId, String kind, Double value, String feedbackId, String msgId) {
    SessionInput feedback = new SessionInput.Feedback(null, null, kind, value, feedbackId, "api", msgId);
    Rejected unstorable = EmbeddedInputRules.problem(List.of(feedback));
    if (unstorable != null) {
      return CompletableFuture.failedFuture(new RecordRejectedException(unstorable.asSingleEvent()));
    }
    return submit(sessionId, agentId, List.of(feedback)).thenCompose(reply -> reply instanceof Rejected r
        ? CompletableFuture.failedFuture(new RecordRejectedException(r.asSingleEvent()))
        : accepted(reply));
  }

  /**
   * The trajectory as stored (desensitized); empty for a session never recorded. A missing or
   * invalid id (design §3.1) fails at once with {@link InvalidSessionIdException}.
   */
  public CompletionStage<Optional<AgentSession.State>> trajectory(String sessionId) {
    String problem = Ids.problem("sessionId", sessionId, Ids.MAX_SESSION_ID);
    if (problem != null) return CompletableFuture.failedFuture(new InvalidSessionIdException(problem));
    // A session the journal lacks is answered without its entity (whose start sharding would journal).
    return keyLikeIds.unstoredKeyLike(sessionId)
        .thenCompose(none -> none ? CompletableFuture.completedFuture(false) : storedSessions.mayBeStored(sessionId))
        .thenCompose(stored -> !stored
            ? CompletableFuture.completedFuture(Optional.<AgentSession.State>empty())
            : sharding.entityRefFor(AgentSession.ENTITY_TYPE_KEY, sessionId)
                .<AgentSession.State>ask(AgentSession.Get::new, askTimeout)
                .thenApply(s -> s.status() == Status.NEW ? Optional.empty() : Optional.of(s)));
  }

  /**
   * As {@link #trajectory}, before recording into the session: an unknown session stays in memory
   * for the recording that follows instead of passivating at once.
   */
  public CompletionStage<Optional<AgentSession.State>> lookup(String sessionId) {
    String problem = Ids.problem("sessionId", sessionId, Ids.MAX_SESSION_ID);
    if (problem != null) return CompletableFuture.failedFuture(new InvalidSessionIdException(problem));
    return keyLikeIds.unstoredKeyLike(sessionId).thenCompose(none -> none
        ? CompletableFuture.completedFuture(Optional.<AgentSession.State>empty())
        : sharding.entityRefFor(AgentSession.ENTITY_TYPE_KEY, sessionId)
            .<AgentSession.State>ask(AgentSession.Lookup::new, askTimeout)
            .thenApply(s -> s.status() == Status.NEW ? Optional.empty() : Optional.of(s)));
  }

  private static CompletionStage<Recorded> accepted(RecordReply reply) {
    if (reply instanceof Recorded r) return CompletableFuture.completedFuture(r);
    Rejected rejected = (Rejected) reply;
    return CompletableFuture.failedFuture(new RecordRejectedException(rejected));
  }

  /**
   * A read named no session: a null or empty id (sharding would drop the ask, and the caller waited
   * out the ask timeout for an AskTimeoutException, which the docs say may be retried), or one no
   * session can have (the HTTP read answers 400 for it; it read as "never recorded" here). The
   * message names {@code sessionId}, as {@code record} words it.
   */
  public static final class InvalidSessionIdException extends IllegalArgumentException {
    public InvalidSessionIdException(String message) {
      super(message);
    }
  }

  /** The session refused the input; nothing was stored. */
  public static final class RecordRejectedException extends RuntimeException {
    private final Rejected rejection;

    public RecordRejectedException(Rejected rejection) {
      super(rejection.describe());
      this.rejection = rejection;
    }

    public Rejected rejection() {
      return rejection;
    }
  }
}
