package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Props;
import org.apache.pekko.cluster.sharding.ShardCoordinator.ShardAllocationStrategy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import scala.collection.immutable.IndexedSeq;
import scala.concurrent.Await;
import scala.concurrent.Future;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Shard placement after a crash (issue #22): a member that just (re)joined is passed over while
 * settled members can take the shards, and nothing is rebalanced onto it yet.
 */
class SettledMembersFirstTest {
  private static ActorSystem system;
  private static ActorRef survivorA;
  private static ActorRef survivorB;
  private static ActorRef restarted;

  @BeforeAll
  static void start() {
    // Local only: the regions are plain references here, no cluster is formed.
    system = ActorSystem.create("placement", com.typesafe.config.ConfigFactory.parseString("pekko.actor.provider = local")
        .withFallback(com.typesafe.config.ConfigFactory.defaultReference()));
    survivorA = system.actorOf(Props.empty(), "a");
    survivorB = system.actorOf(Props.empty(), "b");
    restarted = system.actorOf(Props.empty(), "restarted");
  }

  @AfterAll
  static void stop() throws Exception {
    Await.result(system.terminate(), scala.concurrent.duration.Duration.fromNanos(Duration.ofSeconds(10).toNanos()));
  }

  /** Pekko's least-shard choice among the regions it is offered; remembers what it was offered. */
  private static final class LeastOfOffered implements ShardAllocationStrategy {
    final AtomicReference<Map<ActorRef, IndexedSeq<String>>> offered = new AtomicReference<>();
    final AtomicReference<Set<String>> rebalanceAsked = new AtomicReference<>();

    @Override
    public Future<ActorRef> allocateShard(ActorRef requester, String shardId,
        scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current) {
      Map<ActorRef, IndexedSeq<String>> m = CollectionConverters.asJava(current);
      offered.set(m);
      return Future.successful(m.entrySet().stream().min((x, y) -> Integer.compare(x.getValue().size(),
          y.getValue().size())).orElseThrow().getKey());
    }

    @Override
    public Future<scala.collection.immutable.Set<String>> rebalance(
        scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current,
        scala.collection.immutable.Set<String> inProgress) {
      rebalanceAsked.set(CollectionConverters.asJava(inProgress));
      return Future.successful(CollectionConverters.asScala(Set.of("7")).toSet());
    }
  }

  private static IndexedSeq<String> shards(String... ids) {
    return CollectionConverters.asScala(List.of(ids)).toIndexedSeq();
  }

  /** The dead node's shards being placed: the restarted member holds none, the survivors several. */
  private static scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> afterCrash() {
    return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(Map.of(
        survivorA, shards("1", "2", "3"), survivorB, shards("4", "5"), restarted, shards())));
  }

  private static <T> T await(Future<T> f) throws Exception {
    return Await.result(f, scala.concurrent.duration.Duration.fromNanos(Duration.ofSeconds(5).toNanos()));
  }

  @Test
  void aShardGoesToASettledSurvivorNotToTheRestartedMember() throws Exception {
    LeastOfOffered pekko = new LeastOfOffered();
    var placement = new SettledMembersFirst(pekko, r -> r.equals(restarted));
    assertEquals(survivorB, await(placement.allocateShard(survivorA, "9", afterCrash())));
    assertEquals(Set.of(survivorA, survivorB), pekko.offered.get().keySet());
  }

  @Test
  void onceSettledTheRestartedMemberIsOfferedAgain() throws Exception {
    LeastOfOffered pekko = new LeastOfOffered();
    var placement = new SettledMembersFirst(pekko, r -> false);
    assertEquals(restarted, await(placement.allocateShard(survivorA, "9", afterCrash())));
    assertEquals(3, pekko.offered.get().size());
  }

  @Test
  void whenEveryMemberIsYoungPlacementIsPekkos() throws Exception {
    LeastOfOffered pekko = new LeastOfOffered();
    var placement = new SettledMembersFirst(pekko, r -> true);
    assertEquals(restarted, await(placement.allocateShard(survivorA, "9", afterCrash())));
    assertEquals(3, pekko.offered.get().size());
  }

  @Test
  void nothingIsRebalancedWhileAMemberIsYoungThenPekkoDecides() throws Exception {
    LeastOfOffered pekko = new LeastOfOffered();
    var held = new SettledMembersFirst(pekko, r -> r.equals(restarted));
    assertTrue(await(held.rebalance(afterCrash(), scala.collection.immutable.Set$.MODULE$.empty())).isEmpty());
    assertNull(pekko.rebalanceAsked.get());
    var settled = new SettledMembersFirst(pekko, r -> false);
    assertEquals(Set.of("7"), CollectionConverters.asJava(
        await(settled.rebalance(afterCrash(), scala.collection.immutable.Set$.MODULE$.empty()))));
  }
}
