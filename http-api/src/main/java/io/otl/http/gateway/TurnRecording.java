package io.otl.http.gateway;

import io.otl.core.Ids;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.AgentSession;
import io.otl.http.ApiMetrics;
import io.otl.http.InTurn;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A gateway call's turn into its session, after the answer: one recording per session at a time,
 * off the response path, its outcome remembered in {@link KnownSessions} and counted.
 */
final class TurnRecording {
  // The gateway's one logger name, which operators filter on; this class is one part of it.
  private static final Logger log = LoggerFactory.getLogger(GatewayRoutes.class);

  private final TurnRecorder recorder;
  private final KnownSessions knownSessions;
  /** Turns answered but not yet recorded, which the session routes wait for (a rating right after the answer). */
  private final TurnsInFlight turns;
  /** A session's recordings run one after the other, so each numbers its messages against what the one before it stored. */
  private final InTurn recordings = new InTurn();
  /** Where recordings are prepared and sent, after the answer is on its way to the agent. */
  private final Executor recording;
  private final GatewayMetrics metrics;
  /** The node's event counters: a turn's recorded events count as the events API's do. */
  private final ApiMetrics apiMetrics;
  /**
   * Turns handed to {@link #record} and not yet settled: at {@code gateway.max-recordings-pending} the
   * gateway refuses new calls, so that overload is refused at the door instead of piling up here.
   */
  private final AtomicInteger pending = new AtomicInteger();
  /** This gateway's writes are named {@code prefix:n}: unique across the nodes and restarts of a cluster. */
  private final String writePrefix = "gw-" + Long.toHexString(new java.security.SecureRandom().nextLong());
  private final java.util.concurrent.atomic.AtomicLong writes = new java.util.concurrent.atomic.AtomicLong();

  TurnRecording(TurnRecorder recorder, KnownSessions knownSessions, TurnsInFlight turns, Executor recording,
      GatewayMetrics metrics, ApiMetrics apiMetrics) {
    this.recorder = recorder;
    this.knownSessions = knownSessions;
    this.turns = turns;
    this.recording = recording;
    this.metrics = metrics;
    this.apiMetrics = apiMetrics;
  }

  /**
   * Records the turn, after the answer: the inputs (hashes, desensitized ids) are built and sent on
   * another thread, so neither they nor the journal delay the agent. A recording failure never
   * costs the agent its answer; it is counted and logged.
   */
  void record(ChatCall c, ModelVersion.RouteDecision d, String fallbackFrom, TurnRecorder.Outcome outcome,
      TurnsInFlight.Turn turn) {
    if (!c.recorded()) {
      turn.end();
      return;
    }
    Instant answeredAt = c.receivedAt().plusNanos(System.nanoTime() - c.startNanos());
    pending.incrementAndGet();
    // After the session's previous recording: an agent that sends its next turn the moment it has the
    // answer had that turn recorded against ids not yet updated, and a recurring message lost.
    recordings.run(c.sessionId(), () -> {
      CompletableFuture<Void> settled = new CompletableFuture<>();
      recording.execute(() -> recordOne(c, d, fallbackFrom, outcome, answeredAt, settled));
      return settled;
    }).whenComplete((ok, err) -> {
      pending.decrementAndGet();
      turn.end();
    });
  }

  /** Turns answered and being recorded (recorded, refused or failed: each is settled once). */
  int pending() {
    return pending.get();
  }

  /** Builds the turn's inputs and sends them; {@code settled} completes once the reply is counted. */
  private void recordOne(ChatCall c, ModelVersion.RouteDecision d, String fallbackFrom, TurnRecorder.Outcome outcome,
      Instant answeredAt, CompletableFuture<Void> settled) {
    // What is known now, after the turns recorded before this one: its last message and ids
    // together, so that recurring messages are numbered against the history as stored.
    KnownSessions.Entry now = knownSessions.get(c.sessionId());
    if (now != null && c.agent().equals(now.owner()) && now.lastMessage() != null) {
      // Stored only if this gateway's last write is still the session's last: else another node's gateway
      // recorded turns this memory lacks, and a recurring message ("continue" in a sliding window) numbered
      // from it took an id the session held and was dropped (trial t93: calls round-robin over 3 nodes, 9
      // of 13 messages kept). The session then answers with what it holds, and the turn is numbered
      // against that. On one node the check is a comparison in the session: no extra message.
      send(c, d, fallbackFrom, outcome, answeredAt, settled,
          new Stored(now.eventIds(), now.lastMessage(), true), after(now.write()), 0);
      return;
    }
    if (c.knownComplete()) { // a new session: it holds nothing but what turns recorded before this one stored
      Set<String> ids = now == null ? c.known() : now.eventIds();
      send(c, d, fallbackFrom, outcome, answeredAt, settled, new Stored(ids, null, true),
          after(now == null ? null : now.write()), 0);
      return;
    }
    // This gateway has not recorded into the session since it started, or forgot its ids (a long
    // session): numbered within the request alone, a recurring message ("continue" in a sliding
    // window, a call id the model reuses) got an id the session had, and every later turn was
    // dropped as a duplicate after a restart, on another node, or past the memory's bound (trial t15).
    // So the session says what it holds first; if it cannot, the request is numbered alone as before.
    recorder.asStored(c.sessionId(), c.agent()).whenComplete((reply, err) -> {
      try {
        recording.execute(() -> {
          if (err == null && reply instanceof AgentSession.Outdated o) {
            sendAsStored(c, d, fallbackFrom, outcome, answeredAt, settled, o, 0);
          } else if (err == null && reply instanceof AgentSession.Rejected) {
            sendAsLookedUp(c, d, fallbackFrom, outcome, answeredAt, settled);
          } else {
            send(c, d, fallbackFrom, outcome, answeredAt, settled, new Stored(c.known(), null, false), null, 0);
          }
        });
      } catch (RuntimeException e) {
        giveUp(c, e, new Stored(c.known(), null, false), settled);
      }
    });
  }

  /**
   * A session of an earlier build refuses the empty write {@link TurnRecorder#asStored} sends (rolling
   * upgrade): numbered against its state as read, and written unconditionally, as that build did.
   */
  private void sendAsLookedUp(ChatCall c, ModelVersion.RouteDecision d, String fallbackFrom,
      TurnRecorder.Outcome outcome, Instant answeredAt, CompletableFuture<Void> settled) {
    recorder.storedIn(c.sessionId())
        .handle((state, err) -> err != null ? java.util.Optional.<AgentSession.State>empty() : state)
        .thenAcceptAsync(state -> send(c, d, fallbackFrom, outcome, answeredAt, settled,
            state.isEmpty() ? new Stored(c.known(), null, false) : Stored.of(state.get(), recorder.rederived(state.get())),
            null, RENUMBERINGS), recording)
        .exceptionally(e -> {
          giveUp(c, e, new Stored(c.known(), null, false), settled);
          return null;
        });
  }

  /**
   * How often a turn is numbered again when the session's last gateway write changed meanwhile (another
   * node recorded a turn of the session between the session's answer and this write); then it is written
   * unconditionally, numbered against the session as last seen.
   */
  private static final int RENUMBERINGS = 5;

  /**
   * Numbers the turn against the session as stored and writes it after the session's last gateway write.
   * The re-derivation desensitizes every stored message: on the recording's threads, not the one that
   * completed the ask.
   */
  private void sendAsStored(ChatCall c, ModelVersion.RouteDecision d, String fallbackFrom,
      TurnRecorder.Outcome outcome, Instant answeredAt, CompletableFuture<Void> settled, AgentSession.Outdated o,
      int renumbered) {
    Stored stored;
    try {
      stored = o.state().status() == io.otl.core.session.SessionModel.Status.NEW
          ? new Stored(c.known(), null, false) : Stored.of(o.state(), recorder.rederived(o.state()));
    } catch (RuntimeException e) {
      giveUp(c, e, new Stored(c.known(), null, false), settled);
      return;
    }
    send(c, d, fallbackFrom, outcome, answeredAt, settled, stored,
        renumbered >= RENUMBERINGS ? null : after(o.lastWrite()), renumbered + 1);
  }

  /** The condition a write is sent with: the session's last gateway write as known ({@code ""}: none since it started). */
  private static String after(String lastWrite) {
    return lastWrite != null ? lastWrite : "";
  }

  /** Counts the recording as failed, then releases the session's later recordings, which wait on {@code settled}. */
  private void giveUp(ChatCall c, Throwable e, Stored stored, CompletableFuture<Void> settled) {
    try {
      recorded(c, null, e, List.of(), stored, null);
    } finally {
      settled.complete(null);
    }
  }

  /**
   * What the session held when a turn was numbered: its ids and the last message the gateway
   * recorded in it (null: none or unknown); {@code complete}: the ids are all it held, not a part.
   */
  record Stored(Set<String> ids, String lastMessage, boolean complete) {
    /**
     * @param rederived stored message id → its id under today's desensitizer, where they differ: the
     *     resent history is known under either ({@link RederivedIds})
     */
    static Stored of(AgentSession.State state, java.util.Map<String, String> rederived) {
      // The last message from the messages, which are in the order stored: the id set keeps that order
      // only in the JVM that holds the session. Its state sent to another node (this lookup) or read from
      // a snapshot comes as Jackson's HashSet, so its "last" message was any one, and a turn reaching
      // another node numbered the resent history after the wrong message: a tool call already stored
      // was stored a second time (trial t93: 3 nodes, one conversation's turns on nodes A, B, C).
      String last = TurnRecorder.lastMessage(state.messages().stream().map(AgentSession.MessageRecorded::eventId)
          .toList(), null);
      if (rederived.isEmpty()) return new Stored(state.eventIds(), last, true);
      Set<String> ids = new java.util.LinkedHashSet<>(state.eventIds());
      ids.addAll(rederived.values());
      return new Stored(ids, last == null ? null : rederived.getOrDefault(last, last), true);
    }
  }

  /**
   * @param after the gateway write {@code stored} was known after ({@link KnownSessions.Entry#write};
   *     {@code ""}: none): the turn is stored only if it is still the session's last; null: unconditionally
   * @param renumbered how often the turn was numbered again against the session ({@link #RENUMBERINGS})
   */
  private void send(ChatCall c, ModelVersion.RouteDecision d, String fallbackFrom, TurnRecorder.Outcome outcome,
      Instant answeredAt, CompletableFuture<Void> settled, Stored stored, String after, int renumbered) {
    List<io.otl.core.session.SessionInput> inputs;
    CompletionStage<AgentSession.RecordReply> sent;
    long submittedNanos;
    String write = writePrefix + ":" + writes.incrementAndGet();
    try {
      inputs = recorder.inputs(stored.ids(), stored.lastMessage(), c.request(), c.routedVersion(),
          c.routedServedModel(), d.version(), d.servedModel(), fallbackFrom, outcome, c.receivedAt(), answeredAt);
      submittedNanos = System.nanoTime();
      sent = recorder.submit(c.sessionId(), c.agent(), inputs, write, after);
    } catch (RuntimeException e) {
      giveUp(c, e, stored, settled);
      return;
    }
    sent.whenComplete((reply, err) -> {
      if (err == null && reply instanceof AgentSession.Outdated o) {
        // Nothing stored: numbered again against the session as it answered. The session's later
        // recordings wait on `settled`, which that write completes.
        try {
          recording.execute(() -> sendAsStored(c, d, fallbackFrom, outcome, answeredAt, settled, o, renumbered));
          return;
        } catch (RuntimeException e) {
          err = e;
        }
      }
      try {
        if (err == null && reply instanceof AgentSession.Recorded r && r.accepted() > 0) {
          // otl_journal_write_seconds timed only the events API's and OTLP's writes: a node fed by the
          // gateway alone never showed the histogram docs/api.md lists.
          apiMetrics.journalWrite((System.nanoTime() - submittedNanos) / 1e9);
        }
        recorded(c, reply, err, inputs, stored, write);
      } finally {
        settled.complete(null);
      }
    });
  }

  /** A turn of a recorded session, registered until its recording is settled. */
  TurnsInFlight.Turn begin(ChatCall c) {
    return c.recorded() ? turns.begin(c.sessionId()) : TurnsInFlight.Turn.NONE;
  }

  private void recorded(ChatCall c, AgentSession.RecordReply reply, Throwable err,
      List<io.otl.core.session.SessionInput> inputs, Stored before, String write) {
    if (err == null && reply instanceof AgentSession.Recorded r) {
      // otl_events_accepted_total counted only the events API's and OTLP's events, so a node fed by
      // the gateway alone showed 0 while its sessions filled up.
      apiMetrics.eventsAccepted(r.accepted(), r.duplicates());
      if (r.sampled()) {
        knownSessions.recorded(c.sessionId(), c.agent(), c.routedVersion(), before.complete() ? before.ids() : null,
            before.lastMessage(), inputs.stream().map(io.otl.core.session.SessionInput::eventId).toList(), write);
      } else {
        knownSessions.forget(c.sessionId()); // sampled out: nothing stored, so no owner to hold to
      }
      return;
    }
    if (err == null && reply instanceof AgentSession.Rejected r && r.code() == AgentSession.RejectionCode.CONFLICT
        && !"agentId".equals(r.field())) {
      // Completed since the gateway last saw it (idle timeout): the agent keeps its answer, unrecorded.
      knownSessions.completed(c.sessionId());
      metrics.unrecorded(c.agent(), "session_completed");
      log.info("gateway: agent {} session {} is completed; this call was forwarded but not recorded", Ids.shown(c.agent()),
          Ids.shown(c.sessionId()));
      return;
    }
    knownSessions.forget(c.sessionId());
    metrics.recordFailure(c.agent());
    log.warn("gateway: agent {} session {}: the call was not recorded: {}", Ids.shown(c.agent()), Ids.shown(c.sessionId()),
        err != null ? GatewayErrors.unwrap(err).toString() : ((AgentSession.Rejected) reply).message());
  }
}
