package io.otl.bench;

import java.nio.file.Files;
import java.nio.file.Path;

/** What a result row says about the machine: cores, heap, load, database. */
final class Machine {
  private Machine() {}

  static int cores() {
    return Runtime.getRuntime().availableProcessors();
  }

  static long maxHeapMb() {
    return Runtime.getRuntime().maxMemory() / (1024 * 1024);
  }

  /** The 1-minute load average (other builds on this machine show up here). */
  static double load1() {
    try {
      String s = Files.readString(Path.of("/proc/loadavg")).trim();
      return Double.parseDouble(s.split("\\s+")[0]);
    } catch (Exception e) {
      return -1;
    }
  }

  static long usedHeapAfterGcMb() {
    for (int i = 0; i < 3; i++) {
      System.gc();
      try {
        Thread.sleep(200);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    Runtime r = Runtime.getRuntime();
    return (r.totalMemory() - r.freeMemory()) / (1024 * 1024);
  }
}
