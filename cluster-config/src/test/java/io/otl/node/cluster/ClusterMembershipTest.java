package io.otl.node.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.ClusterMembership;
import io.otl.node.ClusterSettings;
import io.otl.node.HealthProbe;
import io.otl.node.testing.ClusterTestConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.Test;

/** {@link ClusterMembership}: pekko-management cluster bootstrap with config discovery, and the guards. */
class ClusterMembershipTest {

  private static Config base() {
    return ClusterTestConfig.member(0, "org.apache.pekko.cluster.sbr.SplitBrainResolverProvider");
  }

  @Test
  void threeNodesFormOneClusterThroughManagementBootstrapWithConfigDiscovery() {
    int[] ports = {NodeProcess.freePort(), NodeProcess.freePort(), NodeProcess.freePort()};
    String endpoints = java.util.Arrays.stream(ports).mapToObj(p -> "{host = \"127.0.0.1\", port = " + p + "}")
        .collect(Collectors.joining(", "));
    List<ActorSystem<Void>> systems = new ArrayList<>();
    try {
      for (int port : ports) {
        Config config = ConfigFactory.parseString("""
            agentscope.training.cluster.bootstrap = management
            pekko.management.http { hostname = "127.0.0.1", port = %d }
            pekko.management.cluster.bootstrap.contact-point-discovery {
              service-name = otl-test
              discovery-method = config
              required-contact-point-nr = 3
              stable-margin = 1s
            }
            # Several nodes on one host differ by management port: do not keep only our own port.
            pekko.management.cluster.bootstrap.contact-point.filter-on-fallback-port = false
            pekko.discovery.config.services.otl-test.endpoints = [%s]
            """.formatted(port, endpoints)).withFallback(base()).resolve();
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "otl", config);
        systems.add(system);
        ClusterMembership.join(system, system.settings().config(),
            ClusterSettings.fromConfig(system.settings().config()));
      }
      long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
      while (!systems.stream().allMatch(s -> upMembers(s) == 3)) {
        assertTrue(System.nanoTime() < end, "3 members Up within 60 s, have "
            + systems.stream().map(ClusterMembershipTest::upMembers).toList());
        sleep(200);
      }
      // The management endpoint answers on every node (the contact points bootstrap probed).
      for (int port : ports) {
        assertTrue(HealthProbe.probe("http://127.0.0.1:" + port + "/cluster/members", Duration.ofSeconds(3)));
      }
    } finally {
      systems.forEach(ActorTestKit::shutdown);
    }
  }

  @Test
  void managementBootstrapRefusesStaticSeedNodes() {
    Config config = ConfigFactory.parseString("""
        agentscope.training.cluster.bootstrap = management
        pekko.cluster.seed-nodes = ["pekko://otl@127.0.0.1:25520"]
        pekko.management.cluster.bootstrap.contact-point-discovery.discovery-method = config
        """).withFallback(base()).resolve();
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "otl", config);
    try {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> ClusterMembership.join(system, config, ClusterSettings.fromConfig(config)));
      assertTrue(e.getMessage().contains("pekko.cluster.seed-nodes") && e.getMessage().contains("OTL_SEED_NODES"),
          e.getMessage());
    } finally {
      ActorTestKit.shutdown(system);
    }
  }

  @Test
  void unknownModesAndMissingDiscoveryAreRefusedNamingTheKey() {
    IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> ClusterMembership.mode(
        ConfigFactory.parseString("agentscope.training.cluster.bootstrap = kubernetes")));
    assertTrue(unknown.getMessage().contains("agentscope.training.cluster.bootstrap"), unknown.getMessage());
    assertEquals(ClusterMembership.Mode.SEED_NODES, ClusterMembership.mode(ConfigFactory.empty()));

    Config noDiscovery = ConfigFactory.parseString("agentscope.training.cluster.bootstrap = management")
        .withFallback(base()).resolve();
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "otl", noDiscovery);
    try {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> ClusterMembership.join(system, noDiscovery, ClusterSettings.fromConfig(noDiscovery)));
      assertTrue(e.getMessage().contains("discovery-method"), e.getMessage());
    } finally {
      ActorTestKit.shutdown(system);
    }
  }

  @Test
  void withoutSeedNodesANodeFormsAClusterOfOne() {
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "otl", base());
    try {
      ClusterMembership.join(system, system.settings().config(),
            ClusterSettings.fromConfig(system.settings().config()));
      long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (upMembers(system) != 1) {
        assertTrue(System.nanoTime() < end, "a cluster of one within 20 s");
        sleep(100);
      }
    } finally {
      ActorTestKit.shutdown(system);
    }
  }

  private static long upMembers(ActorSystem<?> system) {
    return StreamSupport.stream(Cluster.get(system).state().getMembers().spliterator(), false)
        .map(Member::status).filter(s -> s == MemberStatus.up()).count();
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
