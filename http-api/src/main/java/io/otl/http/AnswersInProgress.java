package io.otl.http;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.ClassicActorSystemProvider;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.ResponseEntity;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * The answers a listener is still giving: requests without their response yet, and responses whose
 * streamed body is still being sent. pekko-http's graceful termination waits for the first but ends
 * a connection whose response has started at once, so a gateway answer streamed as server-sent events
 * was cut when a stopping node closed its port, one second after SIGTERM, although the docs promised
 * in-flight requests the shutdown deadline (trial t56). The server waits here for them to finish
 * before it terminates.
 */
final class AnswersInProgress {
  private static final long POLL_MILLIS = 50;
  /** How long after its connection's end a body pekko-http has not started is taken as dropped. */
  private static final java.util.concurrent.Executor UNSTARTED_CHECK =
      CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS);
  private final AtomicInteger giving = new AtomicInteger();

  /**
   * One connection's share of the count: its requests not answered yet, and its answers whose body is
   * still to be sent. When the connection's requests end, the unanswered ones will get no answer; a
   * body pekko-http has not started a moment later never will be: pekko-http drops, unstarted, a
   * response queued behind a streaming one on a connection that is reset (HTTP pipelining), and its
   * count would otherwise never come back, making every later stop wait out the whole deadline (review
   * t63). A body that has started is counted until it ends, also after the requests ended (a client
   * that asked to close the connection after its answer ends them at once).
   */
  final class Connection {
    private final AtomicInteger unanswered = new AtomicInteger();
    private final Set<Body> bodies = ConcurrentHashMap.newKeySet();

    /** A request has arrived; its answer is in progress until it is sent or the connection ends. */
    void begun() {
      unanswered.incrementAndGet();
      giving.incrementAndGet();
    }

    /** {@code response}, counted as given once its body is out (a strict body: now). */
    HttpResponse untilSent(HttpResponse response) {
      unanswered.decrementAndGet();
      ResponseEntity entity = response.entity();
      if (entity.isStrict() || entity.isKnownEmpty()) {
        giving.decrementAndGet();
        return response;
      }
      Body body = new Body();
      bodies.add(body);
      Source<ByteString, ?> watched = entity.getDataBytes().watchTermination((m, done) -> {
        body.started.set(true);
        done.whenComplete((d, e) -> body.given());
        return m;
      });
      // The same framing as before: a known length stays a Content-Length, a stream stays chunked.
      HttpEntity rewrapped = entity.isDefault()
          ? HttpEntities.create(entity.getContentType(), entity.getContentLengthOption().getAsLong(), watched)
          : entity.isCloseDelimited()
              ? HttpEntities.createCloseDelimited(entity.getContentType(), watched)
              : HttpEntities.createChunked(entity.getContentType(), watched);
      return response.withEntity((ResponseEntity) rewrapped);
    }

    /** The connection's requests and answers ended: what no answer was made for, or never started, is released. */
    void ended() {
      giving.addAndGet(-unanswered.getAndSet(0));
      UNSTARTED_CHECK.execute(() -> {
        for (Body b : bodies) {
          if (!b.started.get()) b.given();
        }
      });
    }

    /** A streamed body; released once, when it ends or is found never started. */
    private final class Body {
      final AtomicBoolean started = new AtomicBoolean();
      private final AtomicBoolean given = new AtomicBoolean();

      void given() {
        if (given.compareAndSet(false, true)) {
          bodies.remove(this);
          giving.decrementAndGet();
        }
      }
    }
  }

  /** The count of a new connection's answers. */
  Connection connection() {
    return new Connection();
  }

  int inProgress() {
    return giving.get();
  }

  /**
   * Completes with the part of {@code deadline} left once no answer is in progress, or with zero when
   * the deadline comes first.
   */
  CompletionStage<Duration> settled(ClassicActorSystemProvider system, Duration deadline) {
    long end = System.nanoTime() + deadline.toNanos();
    CompletableFuture<Duration> settled = new CompletableFuture<>();
    poll(system, end, settled, giving.get() > 0);
    return settled;
  }

  /**
   * A body counts as given when its last element has left the route, a moment before pekko-http has
   * written it (and a stream's closing chunk) to the socket; the terminate that followed at once cut
   * that end, and the client read a reset instead of its last chunk (seen on a loaded machine,
   * AnswersInProgressTest). When answers were waited for, the stop gives their last bytes this long.
   */
  static final long LAST_BYTES_MILLIS = 500;

  private void poll(ClassicActorSystemProvider system, long end, CompletableFuture<Duration> settled,
      boolean waited) {
    long left = end - System.nanoTime();
    if (giving.get() <= 0 && waited && left > 0) {
      long grace = Math.min(TimeUnit.MILLISECONDS.toNanos(LAST_BYTES_MILLIS), left);
      var classic = system.classicSystem();
      classic.scheduler().scheduleOnce(scala.concurrent.duration.Duration.create(grace, TimeUnit.NANOSECONDS),
          () -> settled.complete(Duration.ofNanos(Math.max(0, end - System.nanoTime()))), classic.dispatcher());
      return;
    }
    if (giving.get() <= 0 || left <= 0) {
      settled.complete(Duration.ofNanos(Math.max(0, left)));
      return;
    }
    var classic = system.classicSystem();
    classic.scheduler().scheduleOnce(
        scala.concurrent.duration.Duration.create(Math.min(POLL_MILLIS, TimeUnit.NANOSECONDS.toMillis(left) + 1),
            TimeUnit.MILLISECONDS),
        () -> poll(system, end, settled, waited), classic.dispatcher());
  }
}
