package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.config.NodeConfig;
import io.otl.node.testing.ClusterTestConfig;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.StreamSupport;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.sbr.KeepMajority;
import org.apache.pekko.cluster.sbr.KeepOldest;
import org.apache.pekko.cluster.sbr.StaticQuorum;
import org.apache.pekko.cluster.typed.Cluster;
import org.junit.jupiter.api.Test;

/** {@link FastTickSplitBrainResolver}: Pekko's resolver and strategies, on a 100 ms tick. */
class FastTickSplitBrainResolverTest {

  private static Config cluster(int port, String extra) {
    // A short stable-after so the crash test downs within seconds; extra may override it.
    return ConfigFactory.parseString("pekko.cluster.split-brain-resolver.stable-after = 1s\n" + extra)
        .withFallback(ClusterTestConfig.member(port, FastTickSplitBrainResolver.Provider.class.getName()))
        .resolve();
  }

  @Test
  void theNodeShipsWithIt() {
    Config node = NodeConfig.resolve(Optional.empty(), ConfigFactory.empty(), Map.of());
    assertEquals(FastTickSplitBrainResolver.Provider.class.getName(),
        node.getString("pekko.cluster.downing-provider-class"));
    assertEquals(100, FastTickSplitBrainResolver.TICK.toMillis());
  }

  @Test
  void buildsTheStrategyPekkosProviderWouldAndLeavesLeaseMajorityToPekko() {
    Map<String, Class<?>> expected = Map.of(
        "active-strategy = keep-majority", KeepMajority.class,
        "active-strategy = static-quorum\nstatic-quorum.quorum-size = 2", StaticQuorum.class,
        "active-strategy = keep-oldest", KeepOldest.class);
    for (Map.Entry<String, Class<?>> e : expected.entrySet()) {
      ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "otl",
          cluster(0, "pekko.cluster.split-brain-resolver {\n" + e.getKey() + "\n}"));
      try {
        FastTickSplitBrainResolver.Provider provider = new FastTickSplitBrainResolver.Provider(system.classicSystem());
        assertInstanceOf(e.getValue(), provider.strategy(), e.getKey());
        assertTrue(provider.downingActorProps().get().actorClass() == FastTickSplitBrainResolver.class);
      } finally {
        ActorTestKit.shutdown(system);
      }
    }
    // The cluster itself runs without a downing provider here: Pekko's would look the (absent) lease
    // up as soon as it starts its downing actor, and that failure raced the assertion under load.
    ActorSystem<Void> lease = ActorSystem.create(Behaviors.empty(), "otl", cluster(0, """
        pekko.cluster.downing-provider-class = ""
        pekko.cluster.split-brain-resolver.active-strategy = lease-majority
        pekko.cluster.split-brain-resolver.lease-majority.lease-implementation = "none.configured"
        """));
    try {
      FastTickSplitBrainResolver.Provider provider = new FastTickSplitBrainResolver.Provider(lease.classicSystem());
      assertNull(provider.strategy());
    } finally {
      ActorTestKit.shutdown(lease);
    }
  }

  @Test
  void aCrashedMemberIsDownedAndRemovedByTheMajority() throws Exception {
    int[] ports = {freePort(), freePort(), freePort()};
    String seeds = "pekko.cluster.seed-nodes = [\"pekko://otl@127.0.0.1:" + ports[0] + "\"]\n"
        // The crashed member must not leave: it vanishes, as after a kill -9.
        + "pekko.coordinated-shutdown.run-by-actor-system-terminate = off\n"
        + "pekko.cluster.run-coordinated-shutdown-when-down = off";
    List<ActorSystem<Void>> systems = new ArrayList<>();
    try {
      for (int port : ports) systems.add(ActorSystem.create(Behaviors.empty(), "otl", cluster(port, seeds)));
      await(() -> systems.stream().allMatch(s -> members(s, MemberStatus.up()) == 3), "3 members Up");
      ActorSystem<Void> crashed = systems.remove(2);
      crashed.terminate();
      await(() -> systems.stream().allMatch(s -> members(s, null) == 2),
          "the survivors down and remove the crashed member");
      for (ActorSystem<Void> s : systems) {
        assertEquals(MemberStatus.up(), Cluster.get(s).selfMember().status(), "a survivor stays Up");
      }
    } finally {
      systems.forEach(ActorTestKit::shutdown);
    }
  }

  /** Members of the given status in {@code system}'s view, or all members for null. */
  private static long members(ActorSystem<Void> system, MemberStatus status) {
    return StreamSupport.stream(Cluster.get(system).state().getMembers().spliterator(), false)
        .map(Member::status).filter(s -> status == null || s.equals(status)).count();
  }

  private static void await(java.util.function.BooleanSupplier condition, String what) throws InterruptedException {
    long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (!condition.getAsBoolean()) {
      assertTrue(System.nanoTime() < end, what + " within 60 s");
      Thread.sleep(200);
    }
  }

  private static int freePort() {
    return io.otl.node.testing.FreePorts.take();
  }
}
