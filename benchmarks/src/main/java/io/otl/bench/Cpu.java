package io.otl.bench;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * CPU seconds used, to say where an ingest run spends the machine: this JVM (process CPU time) and
 * the benchmark PostgreSQL cluster (its postmaster's children, from /proc; 0 when not readable).
 */
final class Cpu {
  private static final double TICK = 100.0; // USER_HZ on Linux

  private Cpu() {}

  static double jvmSeconds() {
    var os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean sun) return sun.getProcessCpuTime() / 1e9;
    return 0;
  }

  /** CPU seconds (user + system) of process {@code pid} so far, from /proc; 0 when not readable. */
  static double processSeconds(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", String.valueOf(pid), "stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICK;
    } catch (Exception e) {
      return 0;
    }
  }

  /**
   * CPU seconds (user + system) so far of each thread (by thread id) of process {@code pid} whose
   * name (/proc comm, at most 15 characters) starts with one of {@code prefixes}.
   */
  static java.util.Map<String, Double> threadSeconds(long pid, String... prefixes) {
    java.util.Map<String, Double> out = new java.util.HashMap<>();
    try (Stream<Path> tasks = Files.list(Path.of("/proc", String.valueOf(pid), "task"))) {
      for (Path t : (Iterable<Path>) tasks::iterator) {
        try {
          String stat = Files.readString(t.resolve("stat"));
          String comm = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
          boolean match = false;
          for (String p : prefixes) match |= comm.startsWith(p);
          if (!match) continue;
          String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          out.put(t.getFileName().toString(), (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICK);
        } catch (Exception e) {
          // thread ended meanwhile
        }
      }
    } catch (Exception e) {
      return out;
    }
    return out;
  }

  /**
   * CPU seconds the threads of {@code after} used since {@code before} (threads started since count
   * whole). A thread that ended in between is missing from both sides' difference: HotSpot starts and
   * stops compiler threads as its queue grows and shrinks, so the result is a lower bound.
   */
  static double grown(java.util.Map<String, Double> before, java.util.Map<String, Double> after) {
    double total = 0;
    for (var e : after.entrySet()) total += Math.max(0, e.getValue() - before.getOrDefault(e.getKey(), 0.0));
    return total;
  }

  /**
   * Voluntary context switches so far of each thread of process {@code pid}, by thread id: a thread
   * that parks to wait for the next hand-off switches voluntarily, so the growth per call counts the
   * hand-offs between threads a call takes, which the machine's load moves far less than CPU times.
   */
  static java.util.Map<String, Double> voluntarySwitches(long pid) {
    java.util.Map<String, Double> out = new java.util.HashMap<>();
    try (Stream<Path> tasks = Files.list(Path.of("/proc", String.valueOf(pid), "task"))) {
      for (Path t : (Iterable<Path>) tasks::iterator) {
        try {
          for (String line : Files.readAllLines(t.resolve("status"))) {
            if (line.startsWith("voluntary_ctxt_switches:")) {
              out.put(t.getFileName().toString(), Double.parseDouble(line.substring(line.indexOf(':') + 1).trim()));
            }
          }
        } catch (Exception e) {
          // thread ended meanwhile
        }
      }
    } catch (Exception e) {
      return out;
    }
    return out;
  }

  /** HotSpot's JIT compiler threads, per thread id. */
  static java.util.Map<String, Double> jit(long pid) {
    return threadSeconds(pid, "C1 CompilerThre", "C2 CompilerThre");
  }

  /** HotSpot's garbage collector threads (G1's workers and concurrent threads), per thread id. */
  static java.util.Map<String, Double> gc(long pid) {
    return threadSeconds(pid, "GC Thread", "G1 ");
  }

  /** CPU seconds of every child of the PostgreSQL postmaster whose pid file is {@code pidFile}. */
  static double postgresSeconds(String pidFile) {
    try {
      String pid = Files.readAllLines(Path.of(pidFile)).get(0).trim();
      double total = 0;
      try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
        for (Path p : (Iterable<Path>) procs::iterator) {
          String name = p.getFileName().toString();
          if (!name.chars().allMatch(Character::isDigit)) continue;
          try {
            String stat = Files.readString(p.resolve("stat"));
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // after "pid (comm) ": state ppid ... utime(idx 11) stime(idx 12)
            if (f[1].equals(pid)) total += (Long.parseLong(f[11]) + Long.parseLong(f[12])) / TICK;
            // the postmaster itself, with the CPU of children that already exited
            if (name.equals(pid)) {
              total += (Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13]) + Long.parseLong(f[14]))
                  / TICK;
            }
          } catch (Exception e) {
            // process ended meanwhile
          }
        }
      }
      return total;
    } catch (Exception e) {
      return 0;
    }
  }

  /** The benchmark cluster's pid file ({@code --pg-pid-file}). */
  static volatile String pidFile = "/var/run/postgresql/15-bench.pid";

  static double postgresSeconds() {
    return postgresSeconds(pidFile);
  }
}
