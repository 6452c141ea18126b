package io.otl.http;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.typesafe.config.ConfigFactory;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;
import org.junit.jupiter.api.Test;

/**
 * A stopping server waits for its answers in progress, a streamed one to its end, within the deadline;
 * and an answer pekko-http drops unsent does not hold the stop until the deadline. Real server, real
 * sockets over loopback.
 */
class AnswersInProgressTest {
  /** Far longer than the test waits for the stop: a leaked count would show as a stop that never comes. */
  private static final Duration DEADLINE = Duration.ofSeconds(120);

  private static Route routes() {
    return concat(
        // Forty chunks 100 ms apart: a 4 s stream.
        path("slow", () -> complete(HttpResponse.create().withEntity(HttpEntities.createChunked(
            ContentTypes.TEXT_PLAIN_UTF8, Source.range(1, 40).map(i -> ByteString.fromString("chunk " + i + "\n"))
                .throttle(1, Duration.ofMillis(100)))))),
        path("fast", () -> complete("fast")),
        // A body of known length served as a stream, as files are (the console's).
        path("file", () -> complete(HttpResponse.create().withEntity(HttpEntities.create(
            ContentTypes.TEXT_PLAIN_UTF8, 4, Source.single(ByteString.fromString("file")))))));
  }

  private static ActorTestKit server() {
    return ActorTestKit.create(ConfigFactory.parseString(
        "pekko.coordinated-shutdown.phases.service-requests-done.timeout = 300s")
        .withFallback(ConfigFactory.load()));
  }

  @Test
  void aStreamInProgressRunsToItsEndBeforeTheServerStops() throws Exception {
    ActorTestKit kit = server();
    int port = HttpServer.start(kit.system(), "127.0.0.1", 0, routes(), DEADLINE).toCompletableFuture().get()
        .localAddress().getPort();
    try (Socket socket = new Socket("127.0.0.1", port)) {
      OutputStream out = socket.getOutputStream();
      out.write("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      String start = readUntil(in, "chunk 1\n");
      assertTrue(start.startsWith("HTTP/1.1 200"), start);
      CoordinatedShutdown.get(kit.system()).runAll(CoordinatedShutdown.unknownReason());
      String rest = readUntil(in, "chunk 40\n");
      assertTrue(rest.endsWith("chunk 40\n"), "the stream was cut: " + rest);
    }
    kit.system().getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  /**
   * Two pipelined requests, both answered with a streamed body: the second's waits behind the first, and when the client
   * resets the connection pekko-http drops it unsent. Its count must come back, or every later stop of
   * the node waits out the whole deadline (review t63).
   */
  @Test
  void anAnswerDroppedUnsentWithItsConnectionDoesNotHoldTheStop() throws Exception {
    ActorTestKit kit = server();
    int port = HttpServer.start(kit.system(), "127.0.0.1", 0, routes(), DEADLINE).toCompletableFuture().get()
        .localAddress().getPort();
    try (Socket socket = new Socket("127.0.0.1", port)) {
      OutputStream out = socket.getOutputStream();
      out.write(("GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /file HTTP/1.1\r\nHost: x\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      readUntil(socket.getInputStream(), "chunk 2\n");
      socket.setSoLinger(true, 0);  // close() now resets the connection
    }
    // A fresh request answers: the server is up and the reset connection is gone.
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.getOutputStream().write("GET /fast HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
          .getBytes(StandardCharsets.US_ASCII));
      assertTrue(readUntil(socket.getInputStream(), "fast").endsWith("fast"));
    }
    CoordinatedShutdown.get(kit.system()).runAll(CoordinatedShutdown.unknownReason());
    try {
      kit.system().getWhenTerminated().toCompletableFuture().get(60, TimeUnit.SECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      fail("the stop waits for the dropped answer (it would wait the whole " + DEADLINE.toSeconds() + " s deadline)");
    }
  }

  /** What the stream sent until {@code marker} (inclusive), or until it ended. */
  private static String readUntil(InputStream in, String marker) throws java.io.IOException {
    StringBuilder seen = new StringBuilder();
    int b;
    while (seen.indexOf(marker) < 0 && (b = in.read()) >= 0) seen.append((char) b);
    return seen.toString();
  }
}
