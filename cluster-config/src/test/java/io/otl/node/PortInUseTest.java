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
   * "Bind failed … UnresolvedAddressException" naming no key (trial t47): the failure names that listener's
   * host setting, with the host.
   */
  @Test
  void anUnresolvedListenHostAtTheBindNamesTheHostKey() {
    PortInUse.Refused e = assertThrows(PortInUse.Refused.class, () -> PortInUse.bind(HTTP_API, () -> {
      throw new RuntimeException("Bind failed for TCP channel on endpoint [no.such.host.invalid:8080]",
          new java.nio.channels.UnresolvedAddressException());
    }));
    assertEquals("the HTTP API's host no.such.host.invalid does not resolve: set OTL_HTTP_HOST"
        + " (agentscope.training.http.host) to an address of this machine or a name that resolves to one;"
        + " docs/configuration.md", e.getMessage());
  }

  private static final PortInUse.Listener HTTP_API = new PortInUse.Listener("the HTTP API's", 8080,
      "OTL_HTTP_PORT (agentscope.training.http.port)", "no.such.host.invalid",
      "OTL_HTTP_HOST (agentscope.training.http.host)");

  /**
   * A host that is no address of this machine (192.0.2.1, TEST-NET: never local) fails the bind with
   * "Cannot assign requested address": the line said "another process listens on that port" and named the
   * three port variables, none of which helps. It names the host setting of the listener that failed, with
   * the host. Real binds: the HTTP API's (OTL_HTTP_HOST) and the cluster's (OTL_HOSTNAME).
   */
  @Test
  void aHostThatIsNotThisMachinesNamesTheHostSettingOfThatListener() throws Exception {
    Path dir = Files.createTempDirectory(Path.of("target").toAbsolutePath(), "host-not-here-");
    record Case(String key, String listener, String setting) {}
    for (Case c : new Case[] {
        new Case("agentscope.training.http.host", "the HTTP API's",
            "OTL_HTTP_HOST (agentscope.training.http.host) to one of its addresses, or 0.0.0.0 for all of them"),
        // The cluster's host is the one the other nodes are given: 0.0.0.0 would be no advice.
        new Case("pekko.remote.artery.canonical.hostname", "the cluster",
            "OTL_HOSTNAME (pekko.remote.artery.canonical.hostname) to one of its addresses that the other nodes"
                + " reach (behind NAT, set pekko.remote.artery.bind.hostname to the local one)")}) {
      Exception e = assertThrows(Exception.class, () -> TrainingNode.start(
          ConfigFactory.parseMap(Map.of(c.key(), "192.0.2.1", "pekko.http.server.bind-timeout", "60s",
                  "pekko.remote.artery.bind.bind-timeout", "60s"))
              .withFallback(TestDatabases.node(TestDatabases.h2(dir.resolve("data-" + c.listener().length())), true))));
      String said = Main.startFailure(e) + PortInUse.hint(e);
      assertEquals(c.listener() + " host 192.0.2.1 is not an address of this machine (cannot listen on it): set "
          + c.setting() + "; docs/configuration.md", said);
    }
  }

  /** Only a bind's own failures are named; anything else passes through as it came. */
  @Test
  void anotherFailureOfTheBindPassesThroughUnnamed() {
    IllegalStateException other = new IllegalStateException("journal unreachable");
    assertEquals(other, assertThrows(IllegalStateException.class, () -> PortInUse.bind(HTTP_API, () -> {
      throw other;
    })));
    assertEquals(PortInUse.Cause.OTHER, PortInUse.Cause.of(other));
    assertEquals(PortInUse.Cause.TAKEN, PortInUse.Cause.of(new RuntimeException("Bind failed",
        new java.net.BindException("Address already in use"))));
    assertEquals(PortInUse.Cause.NOT_THIS_MACHINE, PortInUse.Cause.of(new RuntimeException("Bind failed",
        new java.net.BindException("Cannot assign requested address"))));
  }
}
