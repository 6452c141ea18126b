package io.otl.http;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Each listener's start and stop lines name it. Trial t177: a node with {@code otlp.port} set logged
 * {@code HTTP API listening on http://0.0.0.0:4318} for the OTLP receiver's own port, so its log showed
 * two HTTP APIs and no OTLP port.
 */
class ListenerNameTest {

  @Test
  void aNamedListenerIsLoggedByItsNameWhenItStartsAndStops() throws Exception {
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    Logger logger = (Logger) LoggerFactory.getLogger(HttpServer.class);
    lines.start();
    logger.addAppender(lines);
    ActorTestKit kit = ActorTestKit.create();
    try {
      int port = HttpServer.start("OTLP receiver (POST /v1/traces)", kit.system(), "127.0.0.1", 0,
          complete("ok"), Duration.ofSeconds(1), 0, null).toCompletableFuture().get().localAddress().getPort();
      kit.shutdownTestKit();
      List<String> messages = lines.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
      assertTrue(messages.contains("OTLP receiver (POST /v1/traces) listening on http://127.0.0.1:" + port), messages.toString());
      assertTrue(messages.stream().anyMatch(m -> m.startsWith("OTLP receiver (POST /v1/traces) on port " + port + " closed")),
          messages.toString());
    } finally {
      logger.detachAppender(lines);
    }
  }
}
