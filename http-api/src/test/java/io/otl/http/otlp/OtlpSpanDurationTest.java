package io.otl.http.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A span's duration becomes a message's or tool call's {@code latencyMs}, which the session refuses over 24
 * hours (trial-api): a span whose exporter's clock put its end a day or more after its start carries no
 * latency, rather than a value that refuses the span's whole export.
 */
class OtlpSpanDurationTest {
  private static final long START = 1_700_000_000_000_000_000L;

  private static OtlpSpan span(long durationNanos) {
    return new OtlpSpan("5b8efff798038103d269b633813fc60c", "0000000000000007", "", "chat", START,
        START + durationNanos, Map.of(), List.of(), 0, null, Map.of());
  }

  @Test
  void aDurationUpToADayIsTheLatencyAndLongerIsNone() {
    assertEquals(120L, span(120_000_000L).durationMs());
    assertEquals(86_400_000L, span(86_400_000L * 1_000_000L).durationMs());
    assertNull(span((86_400_000L + 1) * 1_000_000L).durationMs());
    assertNull(span(Long.MAX_VALUE - START).durationMs());
  }
}
