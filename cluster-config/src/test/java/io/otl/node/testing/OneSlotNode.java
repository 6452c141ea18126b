package io.otl.node.testing;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Map;

/**
 * A real node with one {@code http.max-in-flight} slot, and the means to hold it: an upload left
 * unfinished on a raw socket, so "every slot held" is a state read on /metrics (which takes no slot),
 * not a race between concurrent requests.
 */
public final class OneSlotNode implements AutoCloseable {
  private final TrainingNode node;
  private final Http http;

  private OneSlotNode(TrainingNode node) {
    this.node = node;
    this.http = new Http(node.httpPort());
  }

  /** A node on its own H2 journal (a temp folder named after {@code name}). */
  public static OneSlotNode start(String name) throws IOException {
    return new OneSlotNode(TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.http.max-in-flight", 1,
            "pekko.http.server.request-timeout", "120s"))
        .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-" + name + "-")), true))));
  }

  public Http http() {
    return http;
  }

  /** The slot, held until the socket is closed (the upload is then dropped and the slot freed). */
  public Socket holdTheSlot() throws IOException, InterruptedException {
    Socket held = new Socket("127.0.0.1", node.httpPort());
    OutputStream out = held.getOutputStream();
    out.write(("POST /v1/sessions/held/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + "Content-Length: 1000\r\n\r\n{\"agentId\":").getBytes(StandardCharsets.UTF_8));
    out.flush();
    Await.until("the unfinished upload to hold the one slot", this::inFlight, n -> n == 1.0);
    return held;
  }

  /** {@code otl_http_in_flight} from /metrics. */
  public double inFlight() {
    for (String line : http.get("/metrics").body().split("\n")) {
      if (line.startsWith("otl_http_in_flight ")) return Double.parseDouble(line.substring(line.indexOf(' ') + 1).trim());
    }
    throw new AssertionError("no otl_http_in_flight on /metrics");
  }

  @Override
  public void close() {
    node.close();
  }
}
