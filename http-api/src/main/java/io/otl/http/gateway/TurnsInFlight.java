package io.otl.http.gateway;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The gateway's turns of each session that this node has answered (or is streaming) but not yet
 * recorded. The gateway records a turn after the answer, off the response path, so an agent that
 * rates an answer by its response id, or posts the task result, the moment the answer arrives
 * would otherwise race the recording: the feedback was refused with 404 (no response with that
 * msgId yet) and a result that got there first completed the session, so its last answer was never
 * stored. The session routes wait here first, for at most {@code maxWait}, and only when this node
 * has such a turn of that session; everyone else pays one map lookup.
 */
public final class TurnsInFlight {
  private final ConcurrentHashMap<String, List<CompletableFuture<Void>>> bySession = new ConcurrentHashMap<>();
  private final Duration maxWait;
  private final Duration maxTurn;

  /**
   * @param maxWait how long a session write waits for this node's turns of the session
   * @param maxTurn after this a turn counts as ended even if its end was never reported (a stream
   *     the client dropped before it started), so nothing is held for ever
   */
  public TurnsInFlight(Duration maxWait, Duration maxTurn) {
    this.maxWait = maxWait;
    this.maxTurn = maxTurn;
  }

  /** One turn being answered or recorded; {@link #end()} once the recording is settled (any outcome). */
  public static final class Turn {
    static final Turn NONE = new Turn(CompletableFuture.completedFuture(null));
    private final CompletableFuture<Void> done;

    private Turn(CompletableFuture<Void> done) {
      this.done = done;
    }

    public void end() {
      done.complete(null);
    }
  }

  /** Registers a turn of the session, before its answer can reach the agent. */
  public Turn begin(String sessionId) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    bySession.compute(sessionId, (k, turns) -> {
      List<CompletableFuture<Void>> l = turns == null ? new ArrayList<>(2) : turns;
      l.add(done);
      return l;
    });
    done.completeOnTimeout(null, maxTurn.toMillis(), TimeUnit.MILLISECONDS);
    done.whenComplete((x, e) -> bySession.computeIfPresent(sessionId, (k, turns) -> {
      turns.remove(done);
      return turns.isEmpty() ? null : turns;
    }));
    return new Turn(done);
  }

  /**
   * Completes when the session's turns registered now have been recorded, or after {@code maxWait}
   * (the write then goes ahead as before); at once when there are none.
   */
  public CompletionStage<Void> settled(String sessionId) {
    return recorded(sessionId).thenApply(all -> null);
  }

  /**
   * As {@link #settled}, telling whether they were all recorded (false: {@code maxWait} ran out first).
   * A write that goes ahead without them may name what they will store: in a fail-over the recording is
   * sent again for longer than the wait (its session's node was killed), and feedback naming the answer
   * this node just gave reached the moved session before it, a 404 for a msgId the agent holds (trial t107).
   */
  public CompletionStage<Boolean> recorded(String sessionId) {
    List<CompletableFuture<Void>> pending = new ArrayList<>();
    bySession.computeIfPresent(sessionId, (k, turns) -> {
      pending.addAll(turns);
      return turns;
    });
    if (pending.isEmpty()) return CompletableFuture.completedFuture(true);
    return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).thenApply(x -> true)
        .completeOnTimeout(false, maxWait.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Sessions with turns not yet recorded (for tests and metrics). */
  int sessions() {
    return bySession.size();
  }
}
