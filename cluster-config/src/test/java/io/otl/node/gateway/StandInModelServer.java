package io.otl.node.gateway;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A model server that answers as a given real one does in a case the simulator does not play (OpenAI's
 * refusals, vLLM's lost adapter): each request's body in, a status and a JSON body out. For the
 * gateway's tests of what it does with such answers.
 */
final class StandInModelServer implements AutoCloseable {
  /** One answer: its HTTP status and JSON body. */
  record Answer(int status, String json) {}

  private final HttpServer server;
  private final AtomicInteger calls = new AtomicInteger();

  private StandInModelServer(Function<byte[], Answer> answer) throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", exchange -> {
      calls.incrementAndGet();
      Answer a = answer.apply(exchange.getRequestBody().readAllBytes());
      byte[] body = a.json().getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(a.status(), body.length);
      try (OutputStream os = exchange.getResponseBody()) {
        os.write(body);
      }
    });
    server.start();
  }

  static StandInModelServer start(Function<byte[], Answer> answer) throws IOException {
    return new StandInModelServer(answer);
  }

  /** The OpenAI base URL, as a version's endpoint names it. */
  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
  }

  int calls() {
    return calls.get();
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
