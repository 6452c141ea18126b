package io.otl.http;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
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
  private final AtomicInteger giving = new AtomicInteger();

  /** A request has arrived; its answer is in progress until {@link #untilSent} or {@link #abandoned}. */
  void begun() {
    giving.incrementAndGet();
  }

  /** Requests whose connection ended before they were answered: no answer will be sent. */
  void abandoned(int requests) {
    if (requests > 0) giving.addAndGet(-requests);
  }

  int inProgress() {
    return giving.get();
  }

  /** {@code response}, counted as given once its body is out (a strict body: now). */
  HttpResponse untilSent(HttpResponse response) {
    ResponseEntity entity = response.entity();
    if (entity.isStrict() || entity.isKnownEmpty()) {
      giving.decrementAndGet();
      return response;
    }
    AtomicInteger once = new AtomicInteger();
    Source<ByteString, ?> watched = entity.getDataBytes().watchTermination((m, done) -> {
      done.whenComplete((d, e) -> {
        if (once.getAndIncrement() == 0) giving.decrementAndGet();
      });
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

  /**
   * Completes with the part of {@code deadline} left once no answer is in progress, or with zero when
   * the deadline comes first.
   */
  CompletionStage<Duration> settled(ClassicActorSystemProvider system, Duration deadline) {
    long end = System.nanoTime() + deadline.toNanos();
    CompletableFuture<Duration> settled = new CompletableFuture<>();
    poll(system, end, settled);
    return settled;
  }

  private void poll(ClassicActorSystemProvider system, long end, CompletableFuture<Duration> settled) {
    long left = end - System.nanoTime();
    if (giving.get() <= 0 || left <= 0) {
      settled.complete(Duration.ofNanos(Math.max(0, left)));
      return;
    }
    var classic = system.classicSystem();
    classic.scheduler().scheduleOnce(
        scala.concurrent.duration.Duration.create(Math.min(POLL_MILLIS, TimeUnit.NANOSECONDS.toMillis(left) + 1),
            TimeUnit.MILLISECONDS),
        () -> poll(system, end, settled), classic.dispatcher());
  }
}
