package io.otl.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Steady HTTP ingest for the reliability drills: {@code rate} requests/s of two message events each,
 * spread over {@code sessions} sessions, for {@code seconds}. A request that fails with 503, 429, a
 * timeout or a connection error is retried with the same body (same event ids) with back-off 200 ms →
 * 2 s until {@code retryFor} after the load ends, as README "Client retries" tells clients to. Every
 * first-attempt answer is recorded with its time, so the drills can say what happened when.
 */
final class SteadyLoad {
  record Answer(long sentAtNanos, long nanos, int status, int attempt) {}

  final String prefix;
  final int sessions;
  final Map<String, AtomicLong> ackedEvents = new ConcurrentHashMap<>();
  final List<Answer> answers = java.util.Collections.synchronizedList(new ArrayList<>());
  final AtomicLong sent = new AtomicLong();
  final AtomicLong acked = new AtomicLong();
  final AtomicLong gaveUp = new AtomicLong();
  final AtomicLong unexpected = new AtomicLong();
  private final Client client;
  private final ExecutorService workers = Executors.newFixedThreadPool(32);

  SteadyLoad(Client client, String prefix, int sessions) {
    this.client = client;
    this.prefix = prefix;
    this.sessions = sessions;
  }

  /** Runs the load; returns when every request is acknowledged or given up (bounded). */
  void run(int rate, int seconds, Duration retryFor) throws InterruptedException {
    long total = (long) rate * seconds;
    long interval = 1_000_000_000L / rate;
    long t0 = System.nanoTime();
    long retryDeadline = t0 + TimeUnit.SECONDS.toNanos(seconds) + retryFor.toNanos();
    for (long i = 0; i < total; i++) {
      long intended = t0 + i * interval;
      long wait = intended - System.nanoTime();
      if (wait > 0) LockSupport.parkNanos(wait);
      String sid = prefix + (i % sessions);
      long k = i / sessions;
      String body = EventGen.body("rel-agent", List.of(
          EventGen.JSON.createObjectNode().put("type", "message").put("eventId", "q" + k).put("role", "user")
              .put("content", "question " + k + " of " + sid),
          EventGen.JSON.createObjectNode().put("type", "message").put("eventId", "a" + k).put("role", "assistant")
              .put("content", "answer " + k).put("latencyMs", 300)));
      sent.incrementAndGet();
      workers.execute(() -> send(sid, body, retryDeadline));
    }
    workers.shutdown();
    workers.awaitTermination(retryFor.toSeconds() + seconds + 60, TimeUnit.SECONDS);
  }

  private void send(String sid, String body, long deadline) {
    long backoff = 200;
    for (int attempt = 1; ; attempt++) {
      long sentAt = System.nanoTime();
      Client.Reply r = client.post("/v1/sessions/" + sid + "/events", body);
      answers.add(new Answer(sentAt, r.nanos(), r.status(), attempt));
      if (r.status() == 202) {
        ackedEvents.computeIfAbsent(sid, s -> new AtomicLong()).addAndGet(2);
        acked.incrementAndGet();
        return;
      }
      boolean retryable = r.status() == 503 || r.status() == 429 || r.status() < 0;
      if (!retryable) {
        unexpected.incrementAndGet();
        if (unexpected.get() <= 5) System.err.println("unexpected answer " + r.status() + " " + r.body());
      }
      if (!retryable || System.nanoTime() > deadline) {
        gaveUp.incrementAndGet();
        return;
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(backoff + (long) (Math.random() * 100)));
      backoff = Math.min(2000, backoff * 2);
    }
  }

  long ackedEventTotal() {
    return ackedEvents.values().stream().mapToLong(AtomicLong::get).sum();
  }
}
