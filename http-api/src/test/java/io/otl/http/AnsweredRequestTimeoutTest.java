package io.otl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.typesafe.config.ConfigFactory;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A request the routes answered, whose client reset the connection before reading the answer: pekko-http's
 * request timeout still fires for it later (its timer outlives the connection), and the guard's timeout handler
 * counted it as a client's "503 request timeout" in the log, for a request that took a few milliseconds (review,
 * session 50). Only a request the timeout actually ended is counted.
 */
class AnsweredRequestTimeoutTest {

  @Test
  void aResetAfterTheAnswerIsNoRequestTimeout() throws Exception {
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    Logger logger = (Logger) LoggerFactory.getLogger(ClientErrorLog.class);
    lines.start();
    logger.addAppender(lines);
    ActorTestKit kit = ActorTestKit.create(ConfigFactory.parseString("pekko.http.server.request-timeout = 1s")
        .withFallback(ConfigFactory.load()));
    try {
      var routes = ApiRoutes.build(new HealthRoutes(List.of(), () -> false), new ApiMetrics(new MetricsRegistry()),
          new Auth(Optional.empty(), false), 64, () -> false, List.of());
      int port = HttpServer.start(kit.system(), "127.0.0.1", 0, routes, Duration.ofSeconds(1)).toCompletableFuture()
          .get().localAddress().getPort();
      for (int i = 0; i < 20; i++) {
        try (Socket socket = new Socket("127.0.0.1", port)) {
          socket.getOutputStream().write("GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
          socket.getOutputStream().flush();
          socket.setSoLinger(true, 0); // close() resets the connection, before the answer is read
        }
      }
      try (Socket socket = new Socket("127.0.0.1", port)) {
        socket.getOutputStream().write("GET /health/live HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
            .getBytes(StandardCharsets.US_ASCII));
        String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        assertTrue(answer.startsWith("HTTP/1.1 200 "), answer);
      }
      Thread.sleep(3_000); // three request timeouts: each reset request's timer has fired by now
      List<String> timeouts = lines.list.stream().map(ILoggingEvent::getFormattedMessage)
          .filter(m -> m.contains("503 request timeout")).toList();
      assertEquals(List.of(), timeouts, "requests answered in milliseconds were logged as timed out");
    } finally {
      kit.shutdownTestKit();
      logger.detachAppender(lines);
    }
  }
}
