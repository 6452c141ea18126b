package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.RawHttp;
import io.otl.node.testing.TestDatabases;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The OTLP port ({@code otlp.port}) refuses a header byte outside ASCII as the API port does (docs/http-edge.md):
 * pekko-http read {@code X-Note: \u00e9} (one Latin-1 byte) as the lead of a UTF-8 sequence, took the line end and the
 * Content-Length after it into the value, and answered the body as a second request. The API port's guard refused it
 * since trial t131; this listener has its own routes, and still answered both (review t135).
 */
class OtlpPortHeaderNotAsciiTest {
  @Test
  void aHeaderByteOutsideAsciiIsAStatus400AndNothingAfterItIsAnswered() throws Exception {
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of("agentscope.training.otlp.port", 0))
        .withFallback(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-port-not-ascii")), true)))) {
      String answered = RawHttp.untilClosed(node.otlpPort(),
          RawHttp.latin1HeaderBeforeContentLength("POST", "/v1/traces", "application/json"), 30_000);
      assertTrue(answered.startsWith("HTTP/1.1 400 "), answered);
      assertEquals(1, answered.split("HTTP/1.1 ", -1).length - 1, "one answer, none to the body: " + answered);
      JsonNode status = new ObjectMapper().readTree(answered.substring(answered.indexOf("\r\n\r\n") + 4));
      assertEquals(3, status.get("code").asInt(), "INVALID_ARGUMENT: " + answered);
      assertTrue(status.get("message").asText().startsWith("the header X-Note holds a character outside ASCII"),
          answered);
    }
  }
}
