package io.otl.http;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.DoubleAdder;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * A small Prometheus registry (text exposition format 0.0.4): counters, gauges read at scrape
 * time, and fixed-bucket histograms. Enough for the node's own figures without a dependency.
 */
public final class MetricsRegistry {
  private final Map<String, Family> families = new ConcurrentHashMap<>();

  private record Family(String name, String type, String help, Map<String, Object> series) {}

  private Family family(String name, String type, String help) {
    return families.computeIfAbsent(name, n -> new Family(n, type, help, new ConcurrentHashMap<>()));
  }

  public void inc(String name, String help, String labels, long by) {
    ((LongAdder) family(name, "counter", help).series().computeIfAbsent(labels, l -> new LongAdder())).add(by);
  }

  /**
   * A gauge whose value (per label set) is read when scraped. A {@code _total} name is a counter's
   * (Prometheus naming; {@code promtool check metrics} flags a gauge that has it): use {@link #counter}.
   */
  public void gauge(String name, String help, Supplier<Map<String, Double>> valuesByLabels) {
    if (name.endsWith("_total")) {
      throw new IllegalArgumentException(name + " ends with _total, a counter's suffix: register it with counter()");
    }
    family(name, "gauge", help).series().put("", valuesByLabels);
  }

  /**
   * A counter whose value (per label set) is read when scraped, from a count kept elsewhere that
   * only grows while the process runs (e.g. records ingested); typed {@code counter} so that
   * {@code rate()} and {@code increase()} treat a restart's drop to 0 as a reset.
   */
  public void counter(String name, String help, Supplier<Map<String, Double>> valuesByLabels) {
    family(name, "counter", help).series().put("", valuesByLabels);
  }

  /**
   * Like {@link #counter}, but beside the family's other series: {@code key} only orders and tells
   * apart the suppliers of one family (each supplies whole label sets, which must not collide with
   * the family's other series).
   */
  public void counterSeries(String name, String help, String key, Supplier<Map<String, Double>> valuesByLabels) {
    family(name, "counter", help).series().put(key, valuesByLabels);
  }

  public void observe(String name, String help, String labels, double value, double[] buckets) {
    Histogram h = (Histogram) family(name, "histogram", help).series()
        .computeIfAbsent(labels, l -> new Histogram(buckets));
    h.observe(value);
  }

  public String scrape() {
    StringBuilder out = new StringBuilder();
    for (Family f : new TreeMap<>(families).values()) {
      out.append("# HELP ").append(f.name()).append(' ').append(f.help()).append('\n');
      out.append("# TYPE ").append(f.name()).append(' ').append(f.type()).append('\n');
      // A counter's label set counted in two places (a route's own count and one read at scrape time, e.g.
      // route="unparsable",status="400" by the request guard and by the parser's error handler) is one series,
      // summed: printed twice, the exposition is invalid and Prometheus keeps one of the two values.
      Map<String, Double> counts = new LinkedHashMap<>();
      boolean counter = f.type().equals("counter");
      for (var e : new TreeMap<>(f.series()).entrySet()) {
        Object v = e.getValue();
        if (v instanceof LongAdder c) {
          counts.merge(e.getKey(), (double) c.sum(), Double::sum);
        } else if (v instanceof Histogram h) {
          h.write(out, f.name(), e.getKey());
        } else if (v instanceof Supplier<?> s) {
          @SuppressWarnings("unchecked")
          Map<String, Double> values = (Map<String, Double>) s.get();
          for (var g : new TreeMap<>(values).entrySet()) {
            if (counter) counts.merge(g.getKey(), g.getValue(), Double::sum);
            else line(out, f.name(), g.getKey(), g.getValue());
          }
        }
      }
      counts.forEach((labels, value) -> line(out, f.name(), labels, value));
    }
    return out.toString();
  }

  private static void line(StringBuilder out, String name, String labels, double value) {
    out.append(name);
    if (!labels.isEmpty()) out.append('{').append(labels).append('}');
    out.append(' ').append(format(value)).append('\n');
  }

  private static String format(double v) {
    return v == Math.rint(v) && !Double.isInfinite(v) ? String.valueOf((long) v) : String.valueOf(v);
  }

  /** {@code key="value"} pairs, escaped per the exposition format. */
  public static String labels(String... kv) {
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < kv.length; i += 2) {
      if (b.length() > 0) b.append(',');
      b.append(kv[i]).append("=\"")
          .append(kv[i + 1].replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")).append('"');
    }
    return b.toString();
  }

  private static final class Histogram {
    private final double[] bounds;
    private final LongAdder[] counts;
    private final DoubleAdder sum = new DoubleAdder();
    private final LongAdder count = new LongAdder();

    Histogram(double[] bounds) {
      this.bounds = bounds.clone();
      this.counts = new LongAdder[bounds.length];
      for (int i = 0; i < bounds.length; i++) counts[i] = new LongAdder();
    }

    void observe(double v) {
      for (int i = 0; i < bounds.length; i++) if (v <= bounds[i]) counts[i].increment();
      sum.add(v);
      count.increment();
    }

    /**
     * A bucket's bound as Prometheus' own clients print it: {@code Double.toString} wrote 0.0002 as
     * {@code 2.0E-4} beside {@code 0.001}, a label a query naming {@code le="0.0002"} does not match (trial t175).
     */
    static String bound(double b) {
      String shown = Double.toString(b);
      return shown.indexOf('E') < 0 ? shown : java.math.BigDecimal.valueOf(b).stripTrailingZeros().toPlainString();
    }

    void write(StringBuilder out, String name, String labels) {
      String sep = labels.isEmpty() ? "" : labels + ",";
      for (int i = 0; i < bounds.length; i++) {
        line(out, name + "_bucket", sep + "le=\"" + bound(bounds[i]) + "\"", counts[i].sum());
      }
      line(out, name + "_bucket", sep + "le=\"+Inf\"", count.sum());
      line(out, name + "_sum", labels, sum.sum());
      line(out, name + "_count", labels, count.sum());
    }
  }
}
