package io.otl.persistence.audit;

import io.otl.core.api.AuditLog.Kind;
import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.AgentSession;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * Replays every entity of some kinds through the read journal and reports what recovery would trip
 * on: an event that cannot be deserialized (or is not an event of the entity), and a gap in the
 * sequence numbers (pekko-persistence-jdbc 1.1.1 stops a recovery at a gap, design §10). Read-only.
 *
 * <p>Blocking (it is the {@code audit verify} command's engine); entities are checked one after
 * the other, each in windows, so memory stays constant whatever the journal's size.
 */
public final class JournalVerifier {

  public enum ProblemKind {
    /** The payload does not deserialize (or the read failed at this row). */
    UNREADABLE,
    /** The payload is not an event of this entity. */
    WRONG_TYPE,
    /** Sequence numbers {@code seqNr..toSeqNr} are missing. */
    GAP
  }

  public record Problem(String persistenceId, ProblemKind kind, long seqNr, long toSeqNr, String detail) {
    @Override
    public String toString() {
      String where = seqNr == toSeqNr ? "seqNr " + seqNr : "seqNr " + seqNr + ".." + toSeqNr;
      return kind + " " + persistenceId + " " + where + ": " + detail;
    }
  }

  /** @param events events read without problem */
  public record Report(long entities, long events, List<Problem> problems) {
    public boolean ok() {
      return problems.isEmpty();
    }
  }

  private final AuditReader reader;
  private final Duration timeout;

  /** @param timeout longest wait for one read-journal query */
  public JournalVerifier(AuditReader reader, Duration timeout) {
    this.reader = reader;
    this.timeout = timeout;
  }

  /** The event type of a kind's entities (a job lives in its coordinator's journal). */
  static Class<?> eventType(Kind kind) {
    return switch (kind) {
      case SESSION -> AgentSession.Event.class;
      case COORDINATOR, JOB -> TrainingCoordinator.Event.class;
      case MODEL -> ModelVersion.Event.class;
    };
  }

  /**
   * Checks every entity of {@code kinds}; {@code onProblem} hears each problem as it is found
   * (e.g. to print it), {@code onEntity} each persistence id checked.
   */
  public Report verify(Set<Kind> kinds, Consumer<Problem> onProblem, Consumer<String> onEntity) {
    List<Problem> problems = Collections.synchronizedList(new ArrayList<>());
    AtomicLong entities = new AtomicLong();
    AtomicLong events = new AtomicLong();
    ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "audit-verify");
      t.setDaemon(true);
      return t;
    });
    try {
      for (Kind kind : List.of(Kind.SESSION, Kind.COORDINATOR, Kind.MODEL)) {
        if (!kinds.contains(kind)) continue;
        Class<?> type = eventType(kind);
        reader.persistenceIds(AuditReader.prefix(kind))
            .mapAsync(1, pid -> CompletableFuture.supplyAsync(() -> {
              Report r = verifyOne(pid, type, p -> {
                problems.add(p);
                onProblem.accept(p);
              });
              entities.incrementAndGet();
              events.addAndGet(r.events());
              onEntity.accept(pid);
              return r;
            }, worker))
            .runWith(Sink.ignore(), reader.system())
            .toCompletableFuture().join();
      }
    } finally {
      worker.shutdownNow();
    }
    return new Report(entities.get(), events.get(), List.copyOf(problems));
  }

  /** Checks one entity's journal. */
  public Report verifyOne(String pid, Class<?> eventType, Consumer<Problem> onProblem) {
    long last = await(reader.lastSeqNr(pid).toCompletableFuture());
    Scan scan = new Scan(pid, eventType, onProblem);
    while (scan.expected <= last) {
      try {
        long from = scan.expected;
        reader.rawEvents(pid, from).runForeach(scan::accept, reader.system()).toCompletableFuture()
            .get(timeout.toMillis() * Math.max(1, (last - from) / AuditReader.WINDOW + 1), TimeUnit.MILLISECONDS);
        break;
      } catch (Exception streamFailure) {
        // The read stopped at the first row it could not turn into an event: find it, row by row.
        scan.probe(last);
      }
    }
    scan.closeGap();
    return new Report(1, scan.read, List.copyOf(scan.found));
  }

  private <T> T await(CompletableFuture<T> f) {
    try {
      return f.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (Exception e) {
      throw new IllegalStateException("the journal did not answer: " + AuditReader.unwrap(e), e);
    }
  }

  /** Walks one journal in sequence-number order. */
  private final class Scan {
    final String pid;
    final Class<?> type;
    final Consumer<Problem> onProblem;
    final List<Problem> found = new ArrayList<>();
    long expected = 1;
    long read;
    long gapFrom = -1;

    Scan(String pid, Class<?> type, Consumer<Problem> onProblem) {
      this.pid = pid;
      this.type = type;
      this.onProblem = onProblem;
    }

    void report(Problem p) {
      found.add(p);
      onProblem.accept(p);
    }

    void accept(EventEnvelope env) {
      long n = env.sequenceNr();
      if (n > expected) {
        if (gapFrom < 0) gapFrom = expected;
        expected = n;
      }
      closeGap();
      if (!type.isInstance(env.event())) {
        report(new Problem(pid, ProblemKind.WRONG_TYPE, n, n, "holds a " + env.event().getClass().getName()
            + ", not a " + type.getName()));
      } else {
        read++;
      }
      expected = n + 1;
    }

    /** Closes an open gap: it ends just before {@code expected}. */
    void closeGap() {
      if (gapFrom < 0) return;
      long to = expected - 1;
      report(new Problem(pid, ProblemKind.GAP, gapFrom, to, gapFrom == 1
          ? "the journal starts at " + (to + 1) + ": events 1.." + to + " are missing, recovery cannot start"
          : "events " + gapFrom + ".." + to + " are missing: a recovery stops at " + (gapFrom - 1)
              + " and loses every later event"));
      gapFrom = -1;
    }

    /** Reads single sequence numbers from {@code expected} until the failing row is found. */
    void probe(long last) {
      while (expected <= last) {
        List<EventEnvelope> one;
        try {
          one = reader.window(pid, expected, expected).runWith(Sink.seq(), reader.system())
              .toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
          closeGap();
          Throwable cause = AuditReader.unwrap(e);
          report(new Problem(pid, ProblemKind.UNREADABLE, expected, expected,
              "cannot deserialize: " + firstLine(cause)));
          expected++;
          return;
        }
        if (one.isEmpty()) {
          if (gapFrom < 0) gapFrom = expected;
          expected++;
        } else {
          accept(one.get(0)); // read fine alone: the failure was transient; go on
          return;
        }
      }
    }
  }

  private static String firstLine(Throwable t) {
    String m = t.getClass().getSimpleName() + (t.getMessage() == null ? "" : ": " + t.getMessage());
    int nl = m.indexOf('\n');
    m = nl < 0 ? m : m.substring(0, nl);
    return m.length() > 300 ? m.substring(0, 300) + "…" : m;
  }
}
