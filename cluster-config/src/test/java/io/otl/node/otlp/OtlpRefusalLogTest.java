package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.typesafe.config.ConfigFactory;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import io.otl.http.otlp.OtlpRoutes;
import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The Java SDK's OTLP/HTTP exporter does not read {@code partial_success}: a span the node refuses
 * (here a chat span without a conversation id) leaves no trace in the agent's application, and the
 * node's log said only "1 refused". The log line now says why, without the span's texts.
 */
class OtlpRefusalLogTest {
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(ConfigFactory.parseMap(Map.of("agentscope.training.otlp.port", 0))
        .withFallback(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-refusal-log")), true)));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  @Test
  void aRefusedSpanIsLoggedWithTheReasonAndWithoutItsText() {
    Logger logger = (Logger) LoggerFactory.getLogger(OtlpRoutes.class);
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    logger.addAppender(lines);
    try {
      SdkTracerProvider provider = SdkTracerProvider.builder()
          .addSpanProcessor(SimpleSpanProcessor.create(OtlpHttpSpanExporter.builder()
              .setEndpoint("http://127.0.0.1:" + node.otlpPort() + "/v1/traces").build()))
          .build();
      provider.get("my-agent").spanBuilder("chat qwen")
          .setAttribute("gen_ai.operation.name", "chat")
          .setAttribute("gen_ai.agent.name", "my-agent")
          .setAttribute("gen_ai.input.messages", "[{\"role\":\"user\",\"content\":\"Hi, I am bob@example.com\"}]")
          .startSpan().end();
      provider.close(); // flushes; the exporter reports success, partial_success unread
      List<String> info = lines.list.stream().map(ILoggingEvent::getFormattedMessage)
          .filter(l -> l.startsWith("OTLP export:")).collect(Collectors.toList());
      assertEquals(1, info.size(), String.valueOf(info));
      assertTrue(info.get(0).contains("1 refused: span ") && info.get(0).contains("has no gen_ai.conversation.id"),
          info.get(0));
      assertTrue(!info.get(0).contains("bob@example.com") && !info.get(0).contains("Hi, I am"), info.get(0));
    } finally {
      logger.detachAppender(lines);
    }
  }
}
