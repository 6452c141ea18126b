package io.otl.http.otlp;

import java.util.List;
import java.util.Map;

/**
 * One span of an OTLP export, independent of its wire encoding (protobuf or JSON), so the GenAI
 * mapping is written once. Attribute values are String, Long, Double, Boolean, List or Map.
 *
 * @param statusCode 0 unset, 1 ok, 2 error (OTLP {@code Status.StatusCode})
 */
public record OtlpSpan(
    String traceId, String spanId, String parentSpanId, String name, long startNanos, long endNanos,
    Map<String, Object> attributes, List<Event> events, int statusCode, String statusMessage,
    Map<String, Object> resource) {

  public static final int STATUS_ERROR = 2;

  /** A span event (the older GenAI conventions carry messages as events). */
  public record Event(String name, long timeNanos, Map<String, Object> attributes) {}

  public String text(String key) {
    Object v = attributes.get(key);
    return v == null ? null : v instanceof String s ? s : String.valueOf(v);
  }

  /**
   * Span duration in milliseconds, or null when the times are missing or reversed, or span more than a session
   * takes as one call's latency ({@link io.otl.core.session.SessionModel#MAX_LATENCY_MS}): a span's clock is the
   * exporter's, and a latency the events API refuses would refuse the span's whole export.
   */
  public Long durationMs() {
    if (startNanos <= 0 || endNanos < startNanos) return null;
    long ms = (endNanos - startNanos) / 1_000_000L;
    return ms > io.otl.core.session.SessionModel.MAX_LATENCY_MS ? null : ms;
  }
}
