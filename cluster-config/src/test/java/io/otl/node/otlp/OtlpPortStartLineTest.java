package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.typesafe.config.ConfigFactory;
import io.otl.http.HttpServer;
import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A node with {@code otlp.port} set names its two listeners apart. Trial t177: the OTLP receiver's own
 * port was logged as {@code HTTP API listening on http://0.0.0.0:4318}, a second HTTP API, and its
 * closing line as {@code HTTP API on port 4318 closed}.
 */
class OtlpPortStartLineTest {

  @Test
  void theOtlpPortIsLoggedAsTheOtlpReceiverNotAsASecondHttpApi() {
    Logger logger = (Logger) LoggerFactory.getLogger(HttpServer.class);
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    logger.addAppender(lines);
    try {
      TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of("agentscope.training.otlp.port", 0))
          .withFallback(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-port-start-line")), true)));
      int api = node.httpPort();
      int otlp = node.otlpPort();
      node.close();
      List<String> messages = lines.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
      assertTrue(messages.stream().anyMatch(m -> m.startsWith("HTTP API listening on ") && m.endsWith(":" + api)),
          messages.toString());
      assertTrue(messages.stream().anyMatch(m -> m.startsWith("OTLP receiver (POST /v1/traces) listening on ")
          && m.endsWith(":" + otlp)), messages.toString());
      assertTrue(messages.stream().noneMatch(m -> m.startsWith("HTTP API") && (m.endsWith(":" + otlp) || m.contains("port " + otlp + " "))),
          messages.toString());
      assertTrue(messages.stream().anyMatch(m -> m.startsWith("OTLP receiver (POST /v1/traces) on port " + otlp + " closed")),
          messages.toString());
    } finally {
      logger.detachAppender(lines);
    }
  }
}
