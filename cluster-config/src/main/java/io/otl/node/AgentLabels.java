package io.otl.node;

import io.otl.http.MetricsRegistry;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.function.BinaryOperator;

/**
 * Bounded agent labels for {@code /metrics} (issue #14.5): the {@code n} agents with the largest
 * volume keep their own label, every other agent is folded into {@code agent="other"}. A node with
 * thousands of agents (or a client inventing agent ids) must not grow a scrape without bound.
 */
final class AgentLabels {
  static final String OTHER = "other";

  private AgentLabels() {}

  /** The {@code n} agents with the largest volume; ties broken by id so the set is stable. */
  static Set<String> top(Map<String, Double> volumeByAgent, int n) {
    Set<String> out = new HashSet<>();
    volumeByAgent.entrySet().stream()
        .sorted(Comparator.<Map.Entry<String, Double>>comparingDouble(Map.Entry::getValue).reversed()
            .thenComparing(Map.Entry::getKey))
        .limit(n)
        .forEach(e -> out.add(e.getKey()));
    return out;
  }

  /**
   * Per-agent values as label sets: agents in {@code top} as themselves, the rest merged into
   * {@code other}. {@code extra} are further label pairs of the series (e.g. state).
   */
  static Map<String, Double> labelled(Map<String, Double> byAgent, Set<String> top, BinaryOperator<Double> merge,
      String... extra) {
    Map<String, Double> merged = new HashMap<>();
    byAgent.forEach((agent, v) -> merged.merge(top.contains(agent) ? agent : OTHER, v, merge));
    Map<String, Double> out = new HashMap<>();
    merged.forEach((agent, v) -> {
      String[] kv = new String[2 + extra.length];
      kv[0] = "agent";
      kv[1] = io.otl.core.Ids.shown(agent); // an earlier build's agent id holding a key, without the key
      System.arraycopy(extra, 0, kv, 2, extra.length);
      out.put(MetricsRegistry.labels(kv), v);
    });
    return out;
  }
}
