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
 * "Address already in use", and the command line then names the setting that moves that listener.
 * The failure here is the real one, from a node whose HTTP port this test holds.
 */
class PortInUseTest {
  /**
   * The failure names the one setting that moves the listener whose port is taken, with its value: the hint
   * named all three port variables, and which to change was the user's guess (trial t141).
   */
  @Test
  void aTakenPortFailsTheStartNamingTheSettingThatMovesIt() throws Exception {
    Path dir = Files.createTempDirectory(Path.of("target").toAbsolutePath(), "port-in-use-");
    try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"))) {
      int port = taken.getLocalPort();
      for (String key : new String[] {"agentscope.training.http.port", "agentscope.training.otlp.port"}) {
        RuntimeException e = assertThrows(RuntimeException.class, () -> TrainingNode.start(
            // Generous binds before the one that fails: a slow bind on a loaded machine is another failure.
            ConfigFactory.parseMap(Map.of(key, port, "pekko.http.server.bind-timeout", "60s",
                    "pekko.remote.artery.bind.bind-timeout", "60s"))
                .withFallback(TestDatabases.node(TestDatabases.h2(dir.resolve("data")), true))));
        String said = Main.startFailure(e) + PortInUse.hint(e);
        String variable = key.contains("otlp") ? "OTL_OTLP_PORT" : "OTL_HTTP_PORT";
        assertTrue(said.contains(" port " + port + " is in use (another process listens on it): start this node with"
            + " another " + variable + " (" + key + ")"), said);
        for (String other : new String[] {"OTL_HTTP_PORT", "OTL_OTLP_PORT", "OTL_CLUSTER_PORT", "OTL_SIMULATOR_PORT"}) {
          assertTrue(other.equals(variable) || !said.contains(other), "names only " + variable + ": " + said);
        }
      }
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
