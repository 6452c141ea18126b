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
class ListenerBindTest {
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
            ConfigFactory.parseMap(Map.of(key, port, "pekko.remote.artery.bind.bind-timeout", "60s"))
                .withFallback(TestDatabases.node(TestDatabases.h2(dir.resolve("data")), true))));
        String said = Main.startFailure(e);
        String variable = key.contains("otlp") ? "OTL_OTLP_PORT" : "OTL_HTTP_PORT";
        assertTrue(said.contains(" port " + port + " is in use (another process listens on it): start this node with"
            + " another " + variable + " (" + key + ")"), said);
        for (String other : new String[] {"OTL_HTTP_PORT", "OTL_OTLP_PORT", "OTL_CLUSTER_PORT", "OTL_SIMULATOR_PORT"}) {
          assertTrue(other.equals(variable) || !said.contains(other), "names only " + variable + ": " + said);
        }
      }
    }
  }

  /**
   * A listen host whose lookup outlasted the config check's bound fails at the bind, with pekko's
   * "Bind failed … UnresolvedAddressException" naming no key (trial t47): the failure names that listener's
   * host setting, with the host.
   */
  @Test
  void anUnresolvedListenHostAtTheBindNamesTheHostKey() {
    ListenerBind.Refused e = assertThrows(ListenerBind.Refused.class, () -> ListenerBind.bind(HTTP_API, () -> {
      throw new RuntimeException("Bind failed for TCP channel on endpoint [no.such.host.invalid:8080]",
          new java.nio.channels.UnresolvedAddressException());
    }));
    assertEquals("the HTTP API's host no.such.host.invalid does not resolve: set OTL_HTTP_HOST"
        + " (agentscope.training.http.host) to an address of this machine or a name that resolves to one;"
        + " docs/configuration.md", e.getMessage());
  }

  private static final ListenerBind.Listener HTTP_API = new ListenerBind.Listener("the HTTP API's", 8080,
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
          ConfigFactory.parseMap(Map.of(c.key(), "192.0.2.1", "pekko.remote.artery.bind.bind-timeout", "60s"))
              .withFallback(TestDatabases.node(TestDatabases.h2(dir.resolve("data-" + c.listener().length())), true))));
      String said = Main.startFailure(e);
      assertEquals(c.listener() + " host 192.0.2.1 is not an address of this machine (cannot listen on it): set "
          + c.setting() + "; docs/configuration.md", said);
    }
  }

  /** Only a bind's own failures are named; anything else passes through as it came. */
  @Test
  void anotherFailureOfTheBindPassesThroughUnnamed() {
    IllegalStateException other = new IllegalStateException("journal unreachable");
    assertEquals(other, assertThrows(IllegalStateException.class, () -> ListenerBind.bind(HTTP_API, () -> {
      throw other;
    })));
    assertEquals(ListenerBind.Cause.OTHER, ListenerBind.Cause.of(other, "127.0.0.1"));
    assertEquals(ListenerBind.Cause.TAKEN, ListenerBind.Cause.of(new RuntimeException("Bind failed",
        new java.net.BindException("Address already in use")), "127.0.0.1"));
    assertEquals(ListenerBind.Cause.NOT_THIS_MACHINE, ListenerBind.Cause.of(new RuntimeException("Bind failed",
        new java.net.BindException("Cannot assign requested address")), "127.0.0.1"));
    // A listener pekko does not wait for with a limit of its own: a timeout is not named as its bind's.
    java.util.concurrent.TimeoutException late = new java.util.concurrent.TimeoutException("Ask timed out");
    assertEquals(late, assertThrows(java.util.concurrent.TimeoutException.class,
        () -> ListenerBind.bind(HTTP_API, () -> {
          throw ListenerBindTest.<RuntimeException>undeclared(late);
        })));
  }

  /**
   * The JDK words a socket error in the machine's language: under LC_ALL=de_DE a taken port is "Die Adresse
   * wird bereits verwendet", and the English words matched nothing, so no setting was named (review t150). Any
   * other bind failure is sorted by whether its host is an address of this machine.
   */
  @Test
  void aBindFailureInAnotherLanguageIsSortedByTheAddress() {
    java.util.function.Function<String, Exception> pekko = (String words) -> new RuntimeException(
        "Bind failed because of java.net.BindException: [/127.0.0.1:8080] " + words,
        new java.net.BindException(words));
    ListenerBind.Listener local = new ListenerBind.Listener("the HTTP API's", 8080,
        "OTL_HTTP_PORT (agentscope.training.http.port)", "127.0.0.1", "OTL_HTTP_HOST (agentscope.training.http.host)");
    ListenerBind.Refused taken = assertThrows(ListenerBind.Refused.class, () -> ListenerBind.bind(local, () -> {
      throw (RuntimeException) pekko.apply("Die Adresse wird bereits verwendet");
    }));
    // Taken or not allowed (de: "Keine Berechtigung" below 1024), which the words would have said.
    assertEquals("the HTTP API's port 8080 cannot be listened on (another process holds it, or it is not allowed"
        + " here): start this node with another OTL_HTTP_PORT (agentscope.training.http.port); docs/configuration.md",
        taken.getMessage());
    ListenerBind.Listener elsewhere = new ListenerBind.Listener("the HTTP API's", 8080,
        "OTL_HTTP_PORT (agentscope.training.http.port)", "192.0.2.1", "OTL_HTTP_HOST (agentscope.training.http.host)");
    ListenerBind.Refused foreign = assertThrows(ListenerBind.Refused.class, () -> ListenerBind.bind(elsewhere, () -> {
      throw (RuntimeException) pekko.apply("Die angeforderte Adresse kann nicht zugewiesen werden");
    }));
    assertTrue(foreign.getMessage().startsWith("the HTTP API's host 192.0.2.1 is not an address of this machine"),
        foreign.getMessage());
  }

  /**
   * pekko waits for the cluster port's bind up to its bind-timeout (3 s) and then throws Scala's checked
   * TimeoutException undeclared: on a loaded machine the start failed with a stack trace, naming nothing. The
   * failure is injected (nobody times out on purpose).
   */
  @Test
  void aClusterBindPastItsTimeLimitNamesTheSettingWithItsValue() {
    ListenerBind.Listener cluster = new ListenerBind.Listener("the cluster", "25520",
        "OTL_CLUSTER_PORT (pekko.remote.artery.canonical.port)", "127.0.0.1",
        "OTL_HOSTNAME (pekko.remote.artery.canonical.hostname)", true, "pekko.remote.artery.bind.bind-timeout = 3s");
    ListenerBind.Refused late = assertThrows(ListenerBind.Refused.class, () -> ListenerBind.bind(cluster, () -> {
      throw ListenerBindTest.<RuntimeException>undeclared(
          new java.util.concurrent.TimeoutException("Future timed out after [3 seconds]"));
    }));
    assertEquals("the cluster port 25520 did not bind within pekko.remote.artery.bind.bind-timeout = 3s (a loaded"
        + " machine): raise it, or start the node again; docs/configuration.md", late.getMessage());
  }

  /** Throws {@code t} as Scala code does a checked exception: without declaring it. */
  @SuppressWarnings("unchecked")
  private static <E extends Throwable> RuntimeException undeclared(Throwable t) throws E {
    throw (E) t;
  }
}
