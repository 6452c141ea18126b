package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.testing.TestDatabases;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A new user's 8080 is often taken (another server, another node): the start fails with pekko's
 * "Address already in use", and the command line then names the variables that move the node.
 * The failure here is the real one, from a node whose HTTP port this test holds.
 */
class PortInUseTest {
  @Test
  void aTakenHttpPortFailsTheStartAndTheHintNamesThePortVariables() throws Exception {
    Path dir = Files.createTempDirectory(Path.of("target").toAbsolutePath(), "port-in-use-");
    try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
      RuntimeException e = assertThrows(RuntimeException.class, () -> TrainingNode.start(
          ConfigFactory.parseMap(Map.of("agentscope.training.http.port", taken.getLocalPort()))
              .withFallback(TestDatabases.node(TestDatabases.h2(dir.resolve("data")), true))));
      String hint = PortInUse.hint(e);
      assertTrue(hint.contains("OTL_HTTP_PORT") && hint.contains("OTL_CLUSTER_PORT") && hint.contains("OTL_SIMULATOR_PORT"),
          e + " -> " + hint);
    }
    assertEquals("", PortInUse.hint(new IllegalStateException("journal unreachable", new java.io.IOException("refused"))));
  }

  /**
   * A listen host whose lookup outlasted the config check's bound fails at the bind, with pekko's
   * "Bind failed … UnresolvedAddressException" naming no key (trial t47): the hint names it.
   */
  @Test
  void anUnresolvedListenHostAtTheBindNamesTheHostKey() {
    String hint = PortInUse.hint(new RuntimeException("Bind failed for TCP channel on endpoint [no.such.host.invalid:8080]",
        new java.nio.channels.UnresolvedAddressException()));
    assertTrue(hint.contains("agentscope.training.http.host") && hint.contains("OTL_HTTP_HOST"), hint);
    assertTrue(!hint.contains("another process listens"), hint);
  }
}
