package io.otl.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The benchmarks of design §9 (see BENCHMARKS.md):
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.otl.bench.Bench &lt;baseline|W1..W8|all|C1|codec&gt; [--option value …]
 * </pre>
 *
 * W1–W3 run the raw-JDBC baseline first, in the same run and on the same database, and report their
 * figure as a ratio to it ({@code --no-baseline} skips it). Each workload prints a table row and writes
 * {@code <results-dir>/<workload>.json}. Not a test: nothing here asserts a time.
 */
public final class Bench {
  private Bench() {}

  public static void main(String[] argv) throws Exception {
    io.otl.node.CommonPool.sizeBeforeFirstUse();
    NodeJvm.killChildrenOnExit();
    if (System.getProperty("logback.configurationFile") == null) {
      System.setProperty("logback.configurationFile", "bench-logback.xml");
    }
    if (argv.length == 0 || argv[0].startsWith("-h") || argv[0].equals("--help") || argv[0].equals("help")) {
      System.out.println("usage: Bench <baseline|W1|W2|W3|W4|W5|W6|W7|W8|all|C1|codec> [--sessions N] [--events N]"
          + " [--batch N] [--concurrency N] [--pg-url jdbc:postgresql://…] [--results-dir DIR] [--journal-batch N]"
          + " [--journal-parallelism N] [--pool N] [--no-baseline] [--no-analyze] [--keep];"
          + " codec: journal codec JSON vs CBOR vs Smile, CPU per row, no database [--sessions 300]"
          + " [--warmup-rounds 150] [--rounds 30] [--raw] (details: BENCHMARKS.md)");
      return;
    }
    if (argv[0].equalsIgnoreCase("C1")) {
      // Pure computation: no database, so it does not go through run() (which opens one).
      C1Canary.main(new Args(argv, 1));
      return;
    }
    if (argv[0].equalsIgnoreCase("codec")) {
      // The journal codec alone: no database, no node (so not through run(), which opens one).
      Args args = new Args(argv, 1);
      Result r = CodecFormats.run(args);
      r.publish(args.resultsDir(), "none");
      System.exit(0);
      return;
    }
    List<Result> results;
    try {
      results = run(argv[0], new Args(argv, 1));
    } catch (Throwable e) {
      e.printStackTrace();
      System.exit(2);
      return;
    }
    System.out.println();
    System.out.println(Result.header());
    for (Result r : results) System.out.println(r.row());
    // The node's non-daemon threads (Kafka, HTTP client pools) must not keep the JVM alive.
    System.exit(0);
  }

  /** Runs one workload (or all) and publishes each result; used by main and by the smoke test. */
  public static List<Result> run(String which, Args args) throws Exception {
    Locale.setDefault(Locale.ROOT);
    Pg pg = new Pg(args);
    Cpu.pidFile = args.string("pg-pid-file", Cpu.pidFile);
    EventGen.complete = !args.string("complete", "true").equals("false");
    String db = pg.version();
    Path dir = args.resultsDir();
    String w = which.toUpperCase(Locale.ROOT);
    List<Result> out = new ArrayList<>();
    System.out.println(Result.header());
    Double baseline = null;
    boolean ingest = w.equals("ALL") || w.equals("W1") || w.equals("W2") || w.equals("W3") || w.equals("BASELINE");
    if (ingest && !args.flag("no-baseline")) {
      Result b = Baseline.run(pg, args);
      b.publish(dir, db);
      out.add(b);
      baseline = Baseline.baselineOf(b);
    }
    if (w.equals("ALL") || w.equals("W1")) out.add(publish(W1Embedded.run(pg, args, baseline), dir, db));
    if (w.equals("ALL") || w.equals("W2")) out.add(publish(W2Http.run(pg, args, baseline), dir, db));
    if (w.equals("ALL") || w.equals("W3")) out.add(publish(W3Kafka.run(pg, args, baseline), dir, db));
    if (w.equals("ALL") || w.equals("W4")) out.add(publish(W4Feedback.run(pg, allSized(args, w, "W4")), dir, db));
    if (w.equals("ALL") || w.equals("W5")) out.add(publish(W5Recovery.run(pg, args), dir, db));
    if (w.equals("ALL") || w.equals("W6")) out.add(publish(W6Audit.run(pg, allSized(args, w, "W6")), dir, db));
    if (w.equals("ALL") || w.equals("W7")) out.add(publish(W7Memory.run(pg, allSized(args, w, "W7")), dir, db));
    if (w.equals("ALL") || w.equals("W8")) out.add(publish(W8Gateway.run(pg, args), dir, db));
    if (out.isEmpty()) throw new IllegalArgumentException("unknown workload " + which);
    return out;
  }

  /** In {@code all}, --sessions/--events are the ingest sizes; W4, W6 and W7 keep their own defaults. */
  private static Args allSized(Args args, String which, String w) {
    if (!which.equals("ALL")) return args;
    return switch (w) {
      case "W4" -> args.withDefault("sessions", 2000);
      case "W6" -> args.withDefault("sessions", 500).withDefault("events", 40);
      default -> args.withDefault("sessions", 100_000);
    };
  }

  private static Result publish(Result r, Path dir, String db) {
    r.publish(dir, db);
    return r;
  }
}
