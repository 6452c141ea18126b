package io.otl.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One workload's outcome: its figures, the headline figure against its target, the machine it ran
 * on; printed as a table row and written as JSON to {@code <results-dir>/<workload>.json}.
 */
final class Result {
  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  final String workload;
  final String title;
  final Map<String, Object> figures = new LinkedHashMap<>();
  final Map<String, Object> machine = new LinkedHashMap<>();
  String headline = "";
  String target = "";
  Double ratioToBaseline;
  Boolean pass;
  final double loadAtStart;

  Result(String workload, String title) {
    this.workload = workload;
    this.title = title;
    this.loadAtStart = Machine.load1();
  }

  Result figure(String name, Object value) {
    figures.put(name, value instanceof Double d ? round(d) : value);
    return this;
  }

  static double round(double d) {
    if (Double.isNaN(d) || Double.isInfinite(d)) return d;
    return Math.abs(d) >= 100 ? Math.round(d) : Math.round(d * 100) / 100.0;
  }

  /** Prints the row and writes the JSON. */
  void publish(Path dir, String database) {
    machine.put("cores", Machine.cores());
    machine.put("maxHeapMb", Machine.maxHeapMb());
    machine.put("load1AtStart", loadAtStart);
    machine.put("load1AtEnd", Machine.load1());
    machine.put("database", database);
    machine.put("java", System.getProperty("java.version"));
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("workload", workload);
    out.put("title", title);
    out.put("headline", headline);
    out.put("target", target);
    out.put("ratioToBaseline", ratioToBaseline == null ? null : round(ratioToBaseline));
    out.put("pass", pass);
    out.put("figures", figures);
    out.put("machine", machine);
    out.put("finishedAt", Instant.now().toString());
    try {
      Files.createDirectories(dir);
      JSON.writeValue(dir.resolve(workload + ".json").toFile(), out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    System.out.println(row());
    System.out.println("    figures: " + figures);
    System.out.flush();
  }

  String row() {
    String verdict = pass == null ? "-" : pass ? "PASS" : "MISS";
    String ratio = ratioToBaseline == null ? "-" : String.format("%.2f", ratioToBaseline);
    return String.format("| %s | %s | %s | %s | %s | %s | cores %d, heap %d MB, load %.1f→%.1f, %s |",
        workload, title, headline, target.isEmpty() ? "-" : target, ratio, verdict, machine.get("cores"),
        machine.get("maxHeapMb"), loadAtStart, machine.get("load1AtEnd"), machine.get("database"));
  }

  static String header() {
    return "| workload | what | result | target | ratio to baseline | verdict | machine |\n|---|---|---|---|---|---|---|";
  }
}
