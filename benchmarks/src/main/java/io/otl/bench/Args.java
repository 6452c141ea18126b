package io.otl.bench;

import java.util.HashMap;
import java.util.Map;

/** {@code --name value} options of the benchmark and harness commands. */
final class Args {
  private final Map<String, String> values = new HashMap<>();

  Args(String[] args, int from) {
    for (int i = from; i < args.length; i++) {
      String a = args[i];
      if (!a.startsWith("--")) throw new IllegalArgumentException("unexpected argument " + a + " (options are --name value)");
      String name = a.substring(2);
      if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
        values.put(name, args[++i]);
      } else {
        values.put(name, "true");
      }
    }
  }

  private Args(Map<String, String> values) {
    this.values.putAll(values);
  }

  /** A copy with {@code name} set, unless the user set it already. */
  Args withDefault(String name, Object value) {
    Args copy = new Args(values);
    copy.values.putIfAbsent(name, String.valueOf(value));
    return copy;
  }

  int integer(String name, int fallback) {
    String v = values.get(name);
    return v == null ? fallback : Integer.parseInt(v.replace("_", ""));
  }

  double number(String name, double fallback) {
    String v = values.get(name);
    return v == null ? fallback : Double.parseDouble(v);
  }

  String string(String name, String fallback) {
    return values.getOrDefault(name, fallback);
  }

  boolean flag(String name) {
    return Boolean.parseBoolean(values.getOrDefault(name, "false"));
  }

  /** {@code --results-dir}, else benchmarks/results from the project's root, else results. */
  java.nio.file.Path resultsDir() {
    return java.nio.file.Path.of(string("results-dir",
        java.nio.file.Files.isDirectory(java.nio.file.Path.of("benchmarks")) ? "benchmarks/results" : "results"));
  }
}
