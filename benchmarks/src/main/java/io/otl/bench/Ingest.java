package io.otl.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * Closed-loop ingest driver shared by W1 (embedded API) and W2 (HTTP): {@code concurrency} lanes, each
 * taking the next session and sending its batches in order (a session's requests never overlap, as
 * with a real agent), then the next session. The payloads are prepared before the clock starts.
 */
final class Ingest {
  private Ingest() {}

  /** Sends one batch of a session; completes with the number of events the session accepted. */
  interface Sender<P> {
    CompletionStage<Integer> send(String sessionId, P payload);
  }

  /** @param jitCpu the part of {@code jvmCpu} spent by the JIT compiler threads (warm-up, not per event) */
  record Stats(long accepted, long failed, double seconds, Latencies latencies, double jvmCpu, double pgCpu,
      double jitCpu, Map<String, Double> cpuByGroup0, Map<String, Double> cpuByGroup1,
      Map<String, Double> allocByGroup0, Map<String, Double> allocByGroup1) {
    double eventsPerSec() {
      return accepted / seconds;
    }
  }

  static <P> List<List<P>> prepare(String prefix, int sessions, int events, int batch,
      Function<List<ObjectNode>, P> toPayload) {
    List<List<P>> out = new ArrayList<>(sessions);
    for (int s = 0; s < sessions; s++) {
      String sid = prefix + s;
      List<P> batches = new ArrayList<>();
      for (int from = 0; from < events; from += batch) {
        batches.add(toPayload.apply(EventGen.events(sid, from, Math.min(events, from + batch), events)));
      }
      out.add(batches);
    }
    return out;
  }

  static <P> Stats drive(String prefix, List<List<P>> payloads, int concurrency, Sender<P> sender, long timeoutSec)
      throws Exception {
    AtomicInteger next = new AtomicInteger();
    AtomicLong accepted = new AtomicLong();
    AtomicLong failed = new AtomicLong();
    Latencies lat = new Latencies(payloads.size() * (payloads.isEmpty() ? 1 : payloads.get(0).size()));
    Map<String, Double> alloc0 = ThreadGroupCpu.allocated();
    Map<String, Double> groups0 = ThreadGroupCpu.snapshot();
    double cpu0 = Cpu.jvmSeconds();
    long self = ProcessHandle.current().pid();
    var jit0 = Cpu.jit(self);
    double pg0 = Cpu.postgresSeconds();
    long t0 = System.nanoTime();
    java.time.LocalTime wall0 = java.time.LocalTime.now(java.time.ZoneOffset.UTC);
    List<CompletableFuture<Void>> lanes = new ArrayList<>();
    for (int l = 0; l < concurrency; l++) {
      lanes.add(lane(prefix, payloads, next, sender, accepted, failed, lat));
    }
    CompletableFuture.allOf(lanes.toArray(CompletableFuture[]::new)).get(timeoutSec, TimeUnit.SECONDS);
    double secs = (System.nanoTime() - t0) / 1e9;
    // For a JFR recording of the run: scripts/jfr-summary.py --from/--to keeps this window's samples.
    System.err.println("ingest window " + prefix + " (UTC) " + wall0 + " to " + java.time.LocalTime.now(java.time.ZoneOffset.UTC));
    double cpu = Cpu.jvmSeconds() - cpu0;
    Map<String, Double> alloc1 = ThreadGroupCpu.allocated();
    return new Stats(accepted.get(), failed.get(), secs, lat, cpu, Cpu.postgresSeconds() - pg0,
        Cpu.grown(jit0, Cpu.jit(self)), groups0, ThreadGroupCpu.snapshot(), alloc0, alloc1);
  }

  private static <P> CompletableFuture<Void> lane(String prefix, List<List<P>> payloads, AtomicInteger next,
      Sender<P> sender, AtomicLong accepted, AtomicLong failed, Latencies lat) {
    int s = next.getAndIncrement();
    if (s >= payloads.size()) return CompletableFuture.completedFuture(null);
    return session(prefix + s, payloads.get(s), 0, sender, accepted, failed, lat)
        .thenCompose(v -> lane(prefix, payloads, next, sender, accepted, failed, lat));
  }

  private static <P> CompletableFuture<Void> session(String sid, List<P> batches, int i, Sender<P> sender,
      AtomicLong accepted, AtomicLong failed, Latencies lat) {
    if (i >= batches.size()) return CompletableFuture.completedFuture(null);
    long start = System.nanoTime();
    return sender.send(sid, batches.get(i)).toCompletableFuture()
        .handle((n, err) -> {
          lat.add(System.nanoTime() - start);
          if (err != null) {
            failed.incrementAndGet();
            if (failed.get() <= 5) System.err.println("ingest failure on " + sid + ": " + err);
          } else {
            accepted.addAndGet(n);
          }
          return null;
        })
        .thenCompose(v -> session(sid, batches, i + 1, sender, accepted, failed, lat));
  }
}
