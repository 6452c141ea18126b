package io.otl.http.gateway;

import io.otl.wire.Views;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * This node's gateway figures per agent and version since it started (issue #15 item 8): calls,
 * errors, tokens and latency, for {@code GET /v1/models/{agentId}/traffic} and the console. Also
 * bounds the label sets of the gateway's {@code /metrics} series: the first {@link #MAX_LABEL_SETS}
 * (agent, version) pairs keep their labels, later ones are summed as {@code other}, because agent
 * names come from clients (X-Agent-Id when auth is off) and must not grow the scrape without limit.
 * A later version of an agent that already has its labels (its next candidate) takes one of
 * {@link #MAX_LATER_VERSIONS} further pairs: with the first pairs gone (each new agent's v0 takes one),
 * a labelled agent's new canary was summed into {@code other}, its figures nowhere on /metrics (trial t88).
 * The JSON view has no such cap: it is read per agent.
 */
public final class GatewayTraffic {
  /** (agent, version) pairs that get their own labels on /metrics. */
  static final int MAX_LABEL_SETS = 200;
  /** Further pairs for later versions of agents that already have labels (a version needs a registration). */
  static final int MAX_LATER_VERSIONS = 200;
  static final String OTHER = "other";
  /** Upper bounds in ms; the quantile is read as the bound of its bucket (at most one bucket high). */
  private static final double[] BOUNDS_MS = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 30_000,
      60_000, 120_000};

  /** A fixed-bucket latency distribution in constant space. */
  static final class Buckets {
    private final LongAdder[] counts = new LongAdder[BOUNDS_MS.length + 1];

    Buckets() {
      for (int i = 0; i < counts.length; i++) counts[i] = new LongAdder();
    }

    void add(double ms) {
      int i = 0;
      while (i < BOUNDS_MS.length && ms > BOUNDS_MS[i]) i++;
      counts[i].increment();
    }

    long total() {
      long n = 0;
      for (LongAdder c : counts) n += c.sum();
      return n;
    }

    /** The upper bound of the bucket holding quantile {@code q}, or null without observations. */
    Double quantile(double q) {
      long n = total();
      if (n == 0) return null;
      long rank = (long) Math.ceil(q * n);
      long seen = 0;
      for (int i = 0; i < counts.length; i++) {
        seen += counts[i].sum();
        if (seen >= Math.max(1, rank)) return i < BOUNDS_MS.length ? BOUNDS_MS[i] : Double.POSITIVE_INFINITY;
      }
      return Double.POSITIVE_INFINITY;
    }

    Map<String, Object> view() {
      Map<String, Object> m = new LinkedHashMap<>();
      for (var e : Map.of("p50", 0.5, "p95", 0.95, "p99", 0.99).entrySet()) {
        Double v = quantile(e.getValue());
        m.put(e.getKey(), v == null || v.isInfinite() ? null : v);
      }
      return new TreeMap<>(m);
    }
  }

  /** One version's counters. */
  static final class Version {
    final LongAdder calls = new LongAdder();
    final LongAdder errors = new LongAdder();
    final LongAdder fallbacks = new LongAdder();
    final LongAdder aborted = new LongAdder();
    final LongAdder promptTokens = new LongAdder();
    final LongAdder completionTokens = new LongAdder();
    final Buckets latency = new Buckets();
    final Buckets firstToken = new Buckets();
  }

  private final Instant since;
  private final Map<String, Map<String, Version>> byAgent = new ConcurrentHashMap<>();
  // The value is the agent's label: its id, or for an id holding an API key (one an earlier build stored:
  // new ones are refused) a mark without the key (Ids.shown), computed once per pair.
  private final Map<String, String> labelled = new ConcurrentHashMap<>();
  /** Agents with at least one labelled pair among the first {@link #MAX_LABEL_SETS}; guarded by {@code labelled}. */
  private final java.util.Set<String> labelledAgents = new java.util.HashSet<>();
  /** Pairs admitted as later versions of labelled agents; guarded by {@code labelled}. */
  private int laterVersions;
  private final Buckets addedStream = new Buckets();
  private final Buckets addedWhole = new Buckets();

  public GatewayTraffic(Instant since) {
    this.since = since;
  }

  Version of(String agent, String version) {
    return byAgent.computeIfAbsent(agent, a -> new ConcurrentHashMap<>()).computeIfAbsent(version, v -> new Version());
  }

  /** The (agent, version) labels of a series: themselves while under the cap, else {@code other}. */
  String[] labels(String agent, String version) {
    String key = agent + '\u0000' + version;
    String shown = labelled.get(key);
    if (shown != null) return new String[] {shown, version};
    synchronized (labelled) {
      shown = labelled.get(key);
      if (shown != null) return new String[] {shown, version};
      if (labelled.size() - laterVersions < MAX_LABEL_SETS) {
        labelled.put(key, shown = io.otl.core.Ids.shown(agent));
        labelledAgents.add(agent);
        return new String[] {shown, version};
      }
      if (labelledAgents.contains(agent) && laterVersions < MAX_LATER_VERSIONS) {
        labelled.put(key, shown = io.otl.core.Ids.shown(agent));
        laterVersions++;
        return new String[] {shown, version};
      }
    }
    return new String[] {OTHER, OTHER};
  }

  /** An agent label alone (series without a version): bounded the same way. */
  String agentLabel(String agent) {
    return labels(agent, "*")[0];
  }

  void added(boolean stream, double seconds) {
    (stream ? addedStream : addedWhole).add(seconds * 1000);
  }

  /** {@code GET /v1/models/{agentId}/traffic}: every version this node's gateway called for the agent. */
  public Map<String, Object> view(String agentId) {
    List<Map<String, Object>> versions = new ArrayList<>();
    new TreeMap<>(byAgent.getOrDefault(agentId, Map.of())).forEach((name, v) -> {
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("version", name);
      m.put("calls", v.calls.sum());
      m.put("errors", v.errors.sum());
      long calls = v.calls.sum();
      m.put("errorRate", calls == 0 ? null : (double) v.errors.sum() / calls);
      m.put("fallbacks", v.fallbacks.sum());
      m.put("aborted", v.aborted.sum());
      m.put("promptTokens", v.promptTokens.sum());
      m.put("completionTokens", v.completionTokens.sum());
      m.put("latencyMs", v.latency.view());
      m.put("firstTokenMs", v.firstToken.view());
      versions.add(m);
    });
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("agentId", agentId);
    out.put("since", since.toString());
    out.put("versions", versions);
    out.put("addedLatencyMs", Views.map("stream", addedStream.view(), "whole", addedWhole.view()));
    return out;
  }
}
