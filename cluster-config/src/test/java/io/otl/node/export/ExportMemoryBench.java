package io.otl.node.export;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.ExportCommand;
import io.otl.node.TrainingNode;
import io.otl.node.readside.FeedTestSupport;
import io.otl.node.testing.TestDatabases;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Opt-in harness (not a surefire test): proves that export streams in constant memory.
 *
 * <pre>
 * # 1. write N completed sessions of agent "bench" into an H2 journal under DIR (any heap)
 * java -cp … io.otl.node.export.ExportMemoryBench write DIR 100000
 * # 2. export them through the real command line path with a small heap
 * java -Xmx256m -cp … io.otl.node.export.ExportMemoryBench export DIR sft
 * </pre>
 *
 * Step 2 prints the count, the time, the largest heap in use after a garbage collection (the live
 * set) seen while exporting, and the peak heap.
 */
public final class ExportMemoryBench {
  private ExportMemoryBench() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 3) {
      System.err.println("usage: ExportMemoryBench write <dir> <sessions> | export <dir> <sft|dpo|rl>");
      System.exit(2);
    }
    Path dir = Path.of(args[1]).toAbsolutePath();
    Files.createDirectories(dir);
    // OTL_BENCH_PG=1: a PostgreSQL schema (TestDatabases.PG_URL) instead of an H2 file under DIR
    boolean pg = System.getenv("OTL_BENCH_PG") != null;
    Config db = pg && args[0].equals("write") ? TestDatabases.postgres() : TestDatabases.h2(dir.resolve("db"));
    if (args[0].equals("write")) {
      write(db, dir, Integer.parseInt(args[2]));
    } else {
      export(dir, args[2]);
    }
    System.exit(0);
  }

  private static void write(Config db, Path dir, int n) throws Exception {
    Config node = ConfigFactory.parseMap(Map.of(
            "agentscope.training.data-collector.session.passivate-after", "1s",
            // a restarted node first restarts its remembered (not yet passivated) sessions
            "agentscope.training.http.ask-timeout", "60s"))
        .withFallback(TestDatabases.node(db, false));
    long t0 = System.nanoTime();
    long run = System.currentTimeMillis(); // session ids differ between runs into the same journal
    try (TrainingNode t = TrainingNode.start(node)) {
      int chunk = 5000;
      for (int from = 0; from < n; from += chunk) {
        int size = Math.min(chunk, n - from);
        FeedTestSupport.completedSessions(t.dataCollector(), "bench-" + run + "-" + from, "bench", size);
        System.out.printf("written %d sessions (%.0f s)%n", from + size, (System.nanoTime() - t0) / 1e9);
      }
    }
    Files.writeString(dir.resolve("node.conf"), "agentscope.training {\n  persistence = "
        + db.getString("agentscope.training.persistence") + "\n  db.url = \""
        + db.getString("agentscope.training.db.url") + "\"\n"
        + (db.hasPath("agentscope.training.db.user") ? "  db.user = \"" + db.getString("agentscope.training.db.user")
            + "\"\n" : "")
        + "}\n");
  }

  private static void export(Path dir, String format) throws Exception {
    AtomicLong maxLive = new AtomicLong();
    AtomicLong maxUsed = new AtomicLong();
    List<MemoryPoolMXBean> heap = ManagementFactory.getMemoryPoolMXBeans().stream()
        .filter(p -> p.getType() == MemoryType.HEAP).toList();
    Thread sampler = new Thread(() -> {
      while (!Thread.currentThread().isInterrupted()) {
        long live = 0;
        for (MemoryPoolMXBean p : heap) if (p.getCollectionUsage() != null) live += p.getCollectionUsage().getUsed();
        maxLive.accumulateAndGet(live, Math::max);
        maxUsed.accumulateAndGet(ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed(), Math::max);
        try {
          Thread.sleep(100);
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "heap-sampler");
    sampler.setDaemon(true);
    sampler.start();
    long t0 = System.nanoTime();
    int code = ExportCommand.run(List.of("export", "--agent", "bench", "--format", format, "--out",
        dir.resolve("out").toString(), "--name", "bench-" + format, "--config", dir.resolve("node.conf").toString()));
    long ms = (System.nanoTime() - t0) / 1_000_000;
    sampler.interrupt();
    long max = Runtime.getRuntime().maxMemory();
    System.out.printf("exit %d in %d ms; -Xmx %d MiB; live heap after GC at most %d MiB; heap in use at most %d MiB%n",
        code, ms, max >> 20, maxLive.get() >> 20, maxUsed.get() >> 20);
  }
}
