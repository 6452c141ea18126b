package io.otl.agentscope;

import io.otl.core.session.SessionInput;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends captured batches off the agent's thread. The agent only ever does a non-blocking {@code
 * offer}: when the buffer is full, or a batch still fails after its attempts, the batch is dropped
 * and counted, so a slow or dead node costs the agent nothing but lost training data. One worker
 * thread keeps each session's events in order.
 */
final class AsyncSender implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(AsyncSender.class);
  private static final Duration DELIVERY_TIMEOUT = Duration.ofSeconds(10);
  private static final int MAX_MERGED = 64;

  record Batch(String sessionId, String agentId, List<SessionInput> events) {}

  private final TrajectorySink sink;
  private final BlockingQueue<Batch> queue;
  private final int capacity;
  private final int maxAttempts;
  private final Duration backoff;
  private final AtomicLong delivered = new AtomicLong();
  private final AtomicLong notSampled = new AtomicLong();
  private final AtomicLong dropped = new AtomicLong();
  private final AtomicLong failedAttempts = new AtomicLong();
  private final AtomicLong drops = new AtomicLong();
  // Offered and not yet delivered or dropped: what flush waits for.
  private final AtomicInteger pending = new AtomicInteger();
  private final Thread worker;
  private volatile boolean closed;
  // Told of each batch given up while the node could not take it (buffer full, unreachable, busy):
  // the hook then sends the session's once-only events (start, system prompt, tools) again.
  private volatile java.util.function.Consumer<Batch> onUnavailable = b -> {};

  AsyncSender(TrajectorySink sink, int capacity, int maxAttempts, Duration backoff) {
    if (sink == null) throw new IllegalArgumentException("sink is required");
    if (capacity < 1) throw new IllegalArgumentException("capacity must be at least 1");
    this.sink = sink;
    this.queue = new ArrayBlockingQueue<>(capacity);
    this.capacity = capacity;
    this.maxAttempts = Math.max(1, maxAttempts);
    this.backoff = backoff;
    this.worker = new Thread(this::run, "otl-agentscope-sender");
    worker.setDaemon(true);
    worker.start();
  }

  /** Who hears of batches dropped because the node was unreachable, busy or slow (not of ones it refused). */
  void onUnavailable(java.util.function.Consumer<Batch> listener) {
    this.onUnavailable = listener == null ? b -> {} : listener;
  }

  /** Never blocks: false (and the events counted as dropped) when the buffer is full or closed. */
  boolean offer(Batch batch) {
    pending.incrementAndGet();
    if (!closed && queue.offer(batch)) return true;
    pending.decrementAndGet();
    if (!closed) tellUnavailable(batch);
    long total = dropped.addAndGet(batch.events().size());
    if (logThisDrop()) {
      log.warn("dropped {} events of session {}: {} (dropped so far: {})", batch.events().size(), batch.sessionId(),
          closed ? "the hook is closed" : "the hook's buffer of " + capacity + " batches is full (the node is slow or "
              + "unreachable; bufferCapacity raises it)", total);
    }
    return false;
  }

  long delivered() {
    return delivered.get();
  }

  long notSampled() {
    return notSampled.get();
  }

  long dropped() {
    return dropped.get();
  }

  long failedAttempts() {
    return failedAttempts.get();
  }

  /** Waits until every batch offered so far was delivered or dropped; false if {@code max} passed first. */
  boolean flush(Duration max) throws InterruptedException {
    long deadline = System.nanoTime() + max.toNanos();
    while (pending.get() > 0) {
      if (System.nanoTime() > deadline) return false;
      Thread.sleep(10);
    }
    return true;
  }

  @Override
  public void close() {
    try {
      flush(DELIVERY_TIMEOUT);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    closed = true;
    worker.interrupt();
  }

  private void run() {
    List<Batch> taken = new ArrayList<>();
    while (!closed) {
      try {
        taken.clear();
        taken.add(queue.take());
        queue.drainTo(taken, MAX_MERGED - 1);
        try {
          for (List<Batch> run : runsBySession(taken)) {
            // One request per run; if the node refuses the merged batch, each part is tried on its own
            // so that one bad batch does not take its neighbours down with it.
            if (!send(merge(run), run.size() == 1) && run.size() > 1) {
              for (Batch b : run) send(b, true);
            }
          }
        } finally {
          pending.addAndGet(-taken.size());
        }
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Consecutive batches of one session become one request: fewer round trips, same order. */
  private static List<List<Batch>> runsBySession(List<Batch> batches) {
    List<List<Batch>> runs = new ArrayList<>();
    for (Batch b : batches) {
      List<Batch> last = runs.isEmpty() ? null : runs.get(runs.size() - 1);
      if (last != null && last.get(0).sessionId().equals(b.sessionId()) && java.util.Objects.equals(last.get(0).agentId(), b.agentId())) {
        last.add(b);
      } else {
        runs.add(new ArrayList<>(List.of(b)));
      }
    }
    return runs;
  }

  private static Batch merge(List<Batch> run) {
    if (run.size() == 1) return run.get(0);
    List<SessionInput> events = new ArrayList<>();
    for (Batch b : run) events.addAll(b.events());
    return new Batch(run.get(0).sessionId(), run.get(0).agentId(), events);
  }

  private void tellUnavailable(Batch batch) {
    try {
      onUnavailable.accept(batch);
    } catch (RuntimeException e) {
      log.warn("could not note a dropped batch of session {}: {}", batch.sessionId(), e.toString());
    }
  }

  /** The 1st, 2nd, 4th, 8th... drop is logged: a dead node must not flood the agent's log either. */
  private boolean logThisDrop() {
    return Long.bitCount(drops.incrementAndGet()) == 1;
  }

  /** Why a batch was given up, in one line and without its events: the sink's reason, or what failed. */
  private static String reason(Throwable failure) {
    if (failure instanceof TrajectorySink.DeliveryException) return failure.getMessage();
    if (failure instanceof TimeoutException) return "no answer within " + DELIVERY_TIMEOUT.toSeconds() + " s";
    return "the sink failed (" + failure.getClass().getSimpleName() + ")";
  }

  /**
   * Delivers with retries; false when the node refused the batch (not retriable) and {@code
   * dropRefused} is false: the caller then splits it. Everything else given up on is dropped.
   */
  private boolean send(Batch batch, boolean dropRefused) throws InterruptedException {
    for (int attempt = 1; ; attempt++) {
      Throwable failure;
      try {
        TrajectorySink.Outcome outcome = sink.deliverWithOutcome(batch.sessionId(), batch.agentId(), batch.events())
            .toCompletableFuture().get(DELIVERY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        (outcome == TrajectorySink.Outcome.NOT_SAMPLED ? notSampled : delivered).addAndGet(batch.events().size());
        return true;
      } catch (ExecutionException e) {
        failure = e.getCause() != null ? e.getCause() : e;
      } catch (TimeoutException | RuntimeException e) {
        failure = e;
      }
      failedAttempts.incrementAndGet();
      boolean retriable = !(failure instanceof TrajectorySink.DeliveryException d) || d.retriable();
      if (!retriable && !dropRefused) return false;
      if (!retriable || attempt >= maxAttempts || closed) {
        if (retriable) tellUnavailable(batch);
        long total = dropped.addAndGet(batch.events().size());
        if (logThisDrop()) log.warn("dropped {} events of session {} after {} attempt(s): {} (dropped so far: {})",
            batch.events().size(), batch.sessionId(), attempt, reason(failure), total);
        return true;
      }
      Thread.sleep(backoff.toMillis() * attempt);
    }
  }
}
