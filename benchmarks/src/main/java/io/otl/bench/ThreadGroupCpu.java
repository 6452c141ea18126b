package io.otl.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * This JVM's CPU split by thread group (per thread, grouped by name): W3 runs the Kafka broker and
 * the producer of the measured records in the node's JVM, so the JVM's CPU per event alone does not
 * say what the node's ingestion costs (BENCHMARKS.md, sessions 42-43). Java threads are read with
 * {@link ThreadMXBean} (full names); HotSpot's own threads (JIT, GC, VM) are not Java threads and are
 * read from /proc; what is left of the process's CPU (threads that ended in between) is {@code other}.
 */
final class ThreadGroupCpu {
  /** Groups by a thread name's start, first match wins; the rest of the Java threads are "other java". */
  private static final List<Map.Entry<String, List<String>>> GROUPS = List.of(
      Map.entry("bench producer, common pool", List.of("kafka-producer-network-thread | " + KafkaBroker.BENCH_PRODUCER_ID,
          "ForkJoinPool.commonPool")),
      Map.entry("consumer (pekko-kafka)", List.of("otl-pekko.kafka.", "kafka-coordinator-heartbeat-thread")),
      Map.entry("producers (node)", List.of("kafka-producer-network-thread")),
      Map.entry("broker", List.of("data-plane-kafka", "kafka-", "controller-", "broker-", "raft-", "quorum-controller",
          "ExpirationReaper", "group-metadata", "transaction-log", "TxnMarker", "LogDirFailure", "client-metrics",
          "metrics-meter", "AddPartitionsToTxn", "executor-", "share-", "persister-")),
      Map.entry("pekko default dispatcher", List.of("otl-pekko.actor.default-dispatcher")),
      Map.entry("pekko other dispatchers", List.of("otl-pekko.", "otl-scheduler")),
      Map.entry("slick/db", List.of("db-", "db housekeeper", "journal-rows", "PostgreSQL-JDBC", "HikariPool")),
      Map.entry("bench main", List.of("main")));

  private ThreadGroupCpu() {}

  /** CPU seconds so far by group, with the process's total under "total". */
  static Map<String, Double> snapshot() {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    Map<String, Double> out = new LinkedHashMap<>();
    double javaTotal = 0;
    long[] ids = mx.getAllThreadIds();
    ThreadInfo[] infos = mx.getThreadInfo(ids);
    for (int i = 0; i < ids.length; i++) {
      if (infos[i] == null) continue;
      long ns = mx.getThreadCpuTime(ids[i]);
      if (ns < 0) continue;
      double s = ns / 1e9;
      out.merge(group(infos[i].getThreadName()), s, Double::sum);
      javaTotal += s;
    }
    long self = ProcessHandle.current().pid();
    double jit = sum(Cpu.jit(self));
    double gc = sum(Cpu.gc(self));
    double vm = sum(Cpu.threadSeconds(self, "VM Thread", "VM Periodic"));
    double total = Cpu.jvmSeconds();
    out.put("JIT", jit);
    out.put("GC", gc);
    out.put("VM", vm);
    out.put("other (ended threads)", Math.max(0, total - javaTotal - jit - gc - vm));
    out.put("total", total);
    return out;
  }

  static String group(String threadName) {
    for (Map.Entry<String, List<String>> g : GROUPS) {
      for (String prefix : g.getValue()) if (threadName.startsWith(prefix)) return g.getKey();
    }
    return "other java";
  }

  /**
   * Bytes allocated so far by the live Java threads, by group, with their sum under "total" (threads that
   * ended in between are missing from a difference: the node's dispatcher and database threads live
   * through a run). Allocation per event is a count the machine's load does not move, unlike CPU time.
   */
  static Map<String, Double> allocated() {
    ThreadMXBean mx = ManagementFactory.getThreadMXBean();
    Map<String, Double> out = new LinkedHashMap<>();
    if (!(mx instanceof com.sun.management.ThreadMXBean sun) || !sun.isThreadAllocatedMemorySupported()) return out;
    long[] ids = mx.getAllThreadIds();
    ThreadInfo[] infos = mx.getThreadInfo(ids);
    long[] bytes = sun.getThreadAllocatedBytes(ids);
    double total = 0;
    for (int i = 0; i < ids.length; i++) {
      if (infos[i] == null || bytes[i] < 0) continue;
      out.merge(group(infos[i].getThreadName()), (double) bytes[i], Double::sum);
      total += bytes[i];
    }
    out.put("total", total);
    return out;
  }

  /** Bytes allocated per event by group between two {@link #allocated} snapshots, largest first, "total" last. */
  static Map<String, Double> perEvent(Map<String, Double> before, Map<String, Double> after, long events) {
    Map<String, Double> out = new LinkedHashMap<>();
    after.entrySet().stream().filter(e -> !e.getKey().equals("total"))
        .map(e -> Map.entry(e.getKey(), Math.max(0, e.getValue() - before.getOrDefault(e.getKey(), 0.0)) / events))
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .forEach(e -> out.put(e.getKey(), (double) Math.round(e.getValue())));
    double total = 0;
    for (double v : out.values()) total += v;
    out.put("total", total);
    return out;
  }

  /** CPU seconds per 1,000 events by group between two snapshots, largest first, "total" last. */
  static Map<String, Double> per1k(Map<String, Double> before, Map<String, Double> after, long events) {
    Map<String, Double> grown = new HashMap<>();
    for (var e : after.entrySet()) {
      grown.put(e.getKey(), Math.max(0, e.getValue() - before.getOrDefault(e.getKey(), 0.0)) * 1000 / events);
    }
    Map<String, Double> out = new LinkedHashMap<>();
    grown.entrySet().stream().filter(e -> !e.getKey().equals("total"))
        .sorted(Map.Entry.<String, Double>comparingByValue().reversed())
        .forEach(e -> out.put(e.getKey(), Math.round(e.getValue() * 1000) / 1000.0));
    out.put("total", Math.round(grown.getOrDefault("total", 0.0) * 1000) / 1000.0);
    return out;
  }

  private static double sum(Map<String, Double> m) {
    double s = 0;
    for (double v : m.values()) s += v;
    return s;
  }
}
