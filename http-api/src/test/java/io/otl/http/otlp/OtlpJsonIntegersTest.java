package io.otl.http.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.http.BadRequest;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * 64-bit integers of the OTLP JSON mapping, which the proto3 JSON printers (the Collector's
 * {@code otlphttp} exporter with {@code encoding: json}, protobuf's JsonFormat) write as decimal
 * strings: an attribute's {@code intValue} is signed, the span times are unsigned.
 */
class OtlpJsonIntegersTest {

  private static OtlpSpan decode(String intValue, String start) {
    String body = "{\"resourceSpans\":[{\"scopeSpans\":[{\"spans\":[{\"traceId\":\"5b8efff798038103d269b633813fc60c\","
        + "\"spanId\":\"eee19b7ec3c1b174\",\"name\":\"chat\",\"startTimeUnixNano\":" + start + ","
        + "\"attributes\":[{\"key\":\"gen_ai.request.top_k\",\"value\":{\"intValue\":" + intValue + "}}]}]}]}]}";
    return OtlpJson.decode(body.getBytes(StandardCharsets.UTF_8)).get(0);
  }

  @Test
  void aNegativeIntValueAsADecimalStringIsReadAsTheNumberItIs() {
    // vLLM's top_k of -1 (off), as a proto3 JSON printer writes it: was a 400 losing the whole batch
    assertEquals(-1L, decode("\"-1\"", "\"1700000000000000000\"").attributes().get("gen_ai.request.top_k"));
    assertEquals(-1L, decode("-1", "\"1700000000000000000\"").attributes().get("gen_ai.request.top_k"));
    assertEquals(Long.MIN_VALUE, decode("\"-9223372036854775808\"", "0").attributes().get("gen_ai.request.top_k"));
  }

  @Test
  void anIntValueOutsideTheSignedRangeIsA400NamingItsType() {
    // read unsigned, "18446744073709551615" passed as -1
    BadRequest e = assertThrows(BadRequest.class, () -> decode("\"18446744073709551615\"", "0"));
    assertTrue(e.getMessage().contains("intValue must be a signed 64-bit integer"), e.getMessage());
  }

  @Test
  void spanTimesAreUnsigned() {
    assertEquals(1700000000000000000L, decode("1", "\"1700000000000000000\"").startNanos());
    BadRequest e = assertThrows(BadRequest.class, () -> decode("1", "\"99999999999999999999\""));
    assertTrue(e.getMessage().contains("startTimeUnixNano must be an unsigned 64-bit integer"), e.getMessage());
  }
}
