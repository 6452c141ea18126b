package io.otl.http.gateway;

import io.otl.http.MetricsRegistry;

/**
 * The gateway's figures on /metrics (per agent and version; design §7.5, issue #15 item 8), with
 * label sets bounded by {@link GatewayTraffic#labels}, and the same figures in {@link GatewayTraffic}
 * for {@code GET /v1/models/{agentId}/traffic}.
 */
final class GatewayMetrics {
  private static final double[] LATENCY = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
      30, 60};
  private static final double[] ADDED = {0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25};

  private final MetricsRegistry registry;
  private final GatewayTraffic traffic;

  GatewayMetrics(MetricsRegistry registry, GatewayTraffic traffic) {
    this.registry = registry;
    this.traffic = traffic;
  }

  /** One upstream call made to a version (a fallback makes a second one, to the stable). */
  void call(String agent, String version) {
    traffic.of(agent, version).calls.increment();
    // otl_gateway_requests_total counts a call under the version that answered it, so a candidate whose
    // calls all fell back had errors and no requests there: its error rate could not be read off /metrics,
    // while the console's traffic table showed every call and a 100 % error rate.
    String[] l = traffic.labels(agent, version);
    registry.inc("otl_gateway_upstream_calls_total",
        "Upstream calls by version, failed ones and a fallback's second call included (the traffic table's calls)",
        MetricsRegistry.labels("agent", l[0], "version", l[1]), 1);
  }

  void request(String agent, String version, int status) {
    String[] l = traffic.labels(agent, version);
    registry.inc("otl_gateway_requests_total", "Chat completions answered by the gateway, by version and status",
        MetricsRegistry.labels("agent", l[0], "version", l[1], "status", String.valueOf(status)), 1);
  }

  /** An upstream failure, counted against the version (a canary guardrail reads it). */
  void upstreamError(String agent, String version, String kind) {
    traffic.of(agent, version).errors.increment();
    String[] l = traffic.labels(agent, version);
    registry.inc("otl_gateway_upstream_errors_total", "Upstream failures by version (connect, status, timeout, stream)",
        MetricsRegistry.labels("agent", l[0], "version", l[1], "kind", kind), 1);
  }

  void fallback(String agent, String fromVersion) {
    traffic.of(agent, fromVersion).fallbacks.increment();
    String[] l = traffic.labels(agent, fromVersion);
    registry.inc("otl_gateway_fallbacks_total", "Calls retried on the stable after the candidate failed",
        MetricsRegistry.labels("agent", l[0], "from", l[1]), 1);
  }

  /** A client that went away mid-stream. */
  void aborted(String agent, String version) {
    traffic.of(agent, version).aborted.increment();
    // The console's "Aborted" column had no series on /metrics (trial t88).
    String[] l = traffic.labels(agent, version);
    registry.inc("otl_gateway_aborted_total",
        "Calls whose client left before the whole answer (mid-stream, or before a non-streamed answer was written)",
        MetricsRegistry.labels("agent", l[0], "version", l[1]), 1);
  }

  void tokens(String agent, String version, Integer prompt, Integer completion) {
    GatewayTraffic.Version v = traffic.of(agent, version);
    String[] l = traffic.labels(agent, version);
    if (prompt != null) {
      v.promptTokens.add(prompt);
      registry.inc("otl_gateway_tokens_total", "Tokens by version and kind (from the upstream's usage)",
          MetricsRegistry.labels("agent", l[0], "version", l[1], "kind", "prompt"), prompt);
    }
    if (completion != null) {
      v.completionTokens.add(completion);
      registry.inc("otl_gateway_tokens_total", "Tokens by version and kind (from the upstream's usage)",
          MetricsRegistry.labels("agent", l[0], "version", l[1], "kind", "completion"), completion);
    }
  }

  void latency(String agent, String version, double totalSeconds, double firstTokenSeconds) {
    GatewayTraffic.Version v = traffic.of(agent, version);
    v.latency.add(totalSeconds * 1000);
    v.firstToken.add(firstTokenSeconds * 1000);
    String[] l = traffic.labels(agent, version);
    registry.observe("otl_gateway_upstream_latency_seconds", "Upstream call latency by version (whole answer)",
        MetricsRegistry.labels("agent", l[0], "version", l[1]), totalSeconds, LATENCY);
    registry.observe("otl_gateway_first_token_seconds", "Latency to the first token by version",
        MetricsRegistry.labels("agent", l[0], "version", l[1]), firstTokenSeconds, LATENCY);
  }

  /**
   * What {@code otl_gateway_added_latency_seconds} measures, word for word in docs/gateway.md "Metrics"
   * (the two described it differently: "before the response head", "before the upstream call and after its
   * answer").
   */
  static final String ADDED_HELP = "Time the gateway adds to a chat call: from the request's arrival until the"
      + " answering upstream call is sent and, for whole answers (stream=false), from that call's whole answer"
      + " until the response head; a failed candidate's call before a fallback is not counted";

  /** @param seconds the gateway's own time in the call, as {@link #ADDED_HELP} says */
  void added(boolean stream, double seconds) {
    traffic.added(stream, Math.max(0, seconds));
    registry.observe("otl_gateway_added_latency_seconds", ADDED_HELP,
        MetricsRegistry.labels("stream", String.valueOf(stream)), Math.max(0, seconds), ADDED);
  }

  void recordFailure(String agent) {
    registry.inc("otl_gateway_record_failures_total", "Gateway calls whose recording in the session failed",
        MetricsRegistry.labels("agent", traffic.agentLabel(agent)), 1);
  }

  void unrecorded(String agent, String reason) {
    registry.inc("otl_gateway_unrecorded_total", "Calls forwarded but not recorded (e.g. the session had completed)",
        MetricsRegistry.labels("agent", traffic.agentLabel(agent), "reason", reason), 1);
  }
}
