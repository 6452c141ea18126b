package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A stopping node says so in its own words: the drain and deadline it applies, when its HTTP port
 * closed, and that it stopped. An operator watching a SIGTERM saw only pekko's lines (found by the
 * SRE trial), none naming the port, the limits or the end.
 */
class StopLogLinesTest {

  @Test
  void aStopLogsTheDrainThePortClosingAndTheEnd() throws Exception {
    ListAppender<ILoggingEvent> captured = new ListAppender<>();
    captured.start();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.addAppender(captured);
    try {
      TrainingNode node = TrainingNode.start(
          TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-stoplines-")), true));
      int port = node.httpPort();
      // Nodes of earlier test classes in this JVM may log their own end while this one runs: keep this node's lines.
      String self = "left the cluster as " + node.system().address();
      long closing = System.currentTimeMillis();
      node.close();
      node.system().getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
      List<String> ours = new ArrayList<>();
      for (int i = 0; i < 50 && ours.size() < 3; i++) {
        ours.clear();
        synchronized (captured) {
          for (ILoggingEvent e : new ArrayList<>(captured.list)) {
            String m = e.getFormattedMessage();
            boolean mine = (m.startsWith("stopping (") && e.getTimeStamp() >= closing) || m.startsWith("HTTP API on port " + port + " ")
                || (m.startsWith("training node stopped") && m.endsWith(self));
            if (mine) {
              ours.add(m);
            }
          }
        }
        Thread.sleep(100);
      }
      assertEquals(3, ours.size(), ours.toString());
      assertTrue(ours.get(0).contains("503 for 1000 ms (http.stop-drain)") && ours.get(0).contains("up to 10000 ms"),
          ours.get(0));
      assertTrue(ours.get(1).startsWith("HTTP API on port " + port + " closed"), ours.get(1));
      assertTrue(ours.get(2).startsWith("training node stopped"), ours.get(2));
    } finally {
      root.detachAppender(captured);
    }
  }
  /**
   * Embedded with HTTP off (docs/api.md's example), close() logged "new requests get 503 for 1000 ms
   * (http.stop-drain), then the HTTP port closes …" for a port the application never had, and waited
   * that drain for nobody. It now says it leaves the cluster, and does not wait.
   */
  @Test
  void withHttpOffTheStopSpeaksOfNoPortAndDrainsNothing() throws Exception {
    ListAppender<ILoggingEvent> captured = new ListAppender<>();
    captured.start();
    Logger log = (Logger) LoggerFactory.getLogger(TrainingNode.class);
    log.addAppender(captured);
    try {
      // A drain long enough that waiting it out shows whatever the machine's speed.
      TrainingNode node = TrainingNode.start(ConfigFactory.parseString("agentscope.training.http.stop-drain = 60s")
          .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-stoplines-")), false)));
      long start = System.nanoTime();
      node.close();
      assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(45), "close() waited out the drain");
      List<String> stopping = new ArrayList<>();
      synchronized (captured) {
        for (ILoggingEvent e : new ArrayList<>(captured.list)) {
          if (e.getFormattedMessage().startsWith("stopping (")) stopping.add(e.getFormattedMessage());
        }
      }
      assertEquals(1, stopping.size(), stopping.toString());
      assertTrue(stopping.get(0).endsWith("leaving the cluster (HTTP off: nothing to drain)"), stopping.get(0));
    } finally {
      log.detachAppender(captured);
    }
  }
}
