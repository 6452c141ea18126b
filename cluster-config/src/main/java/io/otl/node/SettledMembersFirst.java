package io.otl.node;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.apache.pekko.actor.AbstractActor;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.actor.Props;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.sharding.ShardCoordinator.ActorSystemDependentAllocationStrategy;
import org.apache.pekko.cluster.sharding.ShardCoordinator.ShardAllocationStrategy;
import org.apache.pekko.cluster.sharding.ShardCoordinator.StartableAllocationStrategy;
import org.apache.pekko.cluster.sharding.typed.ClusterShardingSettings;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import scala.collection.immutable.IndexedSeq;
import scala.concurrent.Future;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Shard placement that keeps shards off members that joined less than {@code grace} ago while
 * settled members are there to take them (issue #22, docs/operations.md "Where the seconds go").
 *
 * <p>Why: after a kill -9 the supervisor restarts the node at once, and it rejoins while the new
 * shard coordinator is still placing the dead node's remembered shards. Pekko's least-shard
 * strategy then sends every later placement to it (it holds none), though its region registers as
 * soon as it is Up, seconds before its start-up ends: in R4 the slowest session answered only when
 * the restarted node had started, 3.5-4 s after the last placement. Placed on a settled survivor, it
 * answers once placed. Rebalancing onto the new member is held back for the same grace, then
 * Pekko's own rebalance levels the shards.
 *
 * <p>When every region is young (a cluster starting), placement is Pekko's. Unknown members count
 * as settled, so a view that lags never stops a placement.
 */
final class SettledMembersFirst implements ActorSystemDependentAllocationStrategy {
  private final ShardAllocationStrategy delegate;
  private final Predicate<ActorRef> young;

  /** {@code young}: whether a region's member joined too recently to be given shards. */
  SettledMembersFirst(ShardAllocationStrategy delegate, Predicate<ActorRef> young) {
    this.delegate = delegate;
    this.young = young;
  }

  /** Applies the placement to entity types; Pekko's own when the grace is zero. */
  interface Placement {
    <M, E> Entity<M, E> on(Entity<M, E> entity);
  }

  /** Follows membership from now on (call before sharding starts) and places every type's shards. */
  static Placement placement(org.apache.pekko.actor.typed.ActorSystem<?> system, ClusterSharding sharding,
      Duration grace) {
    if (grace.isZero()) return new Placement() {
      @Override
      public <M, E> Entity<M, E> on(Entity<M, E> entity) {
        return entity;
      }
    };
    Members members = Members.follow(system.classicSystem(), grace);
    ClusterShardingSettings settings = ClusterShardingSettings.create(system);
    return new Placement() {
      @Override
      public <M, E> Entity<M, E> on(Entity<M, E> entity) {
        return entity.withAllocationStrategy(members.strategy(sharding.defaultShardAllocationStrategy(settings)));
      }
    };
  }

  /** When each current member was first seen Up (or WeaklyUp) by this node. */
  static final class Members {
    private record Seen(long uid, long atNanos) {}

    private final Map<Address, Seen> seen = new ConcurrentHashMap<>();
    private final Cluster cluster;
    private final long graceNanos;

    private Members(Cluster cluster, Duration grace) {
      this.cluster = cluster;
      this.graceNanos = grace.toNanos();
    }

    /** Starts following membership on {@code system}; call once per node, before sharding starts. */
    static Members follow(ActorSystem system, Duration grace) {
      Members m = new Members(Cluster.get(system), grace);
      // A system actor: the node's typed guardian accepts no top-level actors from outside.
      ((ExtendedActorSystem) system).systemActorOf(Props.create(Follower.class, () -> new Follower(m)),
          "otl-shard-placement-members");
      return m;
    }

    /** A strategy for one entity type, placing as {@code delegate} does among settled members. */
    ShardAllocationStrategy strategy(ShardAllocationStrategy delegate) {
      return new SettledMembersFirst(delegate, this::young);
    }

    void up(Member m) {
      // A new incarnation (same address, other uid) starts its grace again; WeaklyUp then Up does not.
      seen.compute(m.address(), (a, old) -> old != null && old.uid() == m.uniqueAddress().longUid() ? old
          : new Seen(m.uniqueAddress().longUid(), System.nanoTime()));
    }

    void removed(Member m) {
      seen.computeIfPresent(m.address(), (a, old) -> old.uid() == m.uniqueAddress().longUid() ? null : old);
    }

    boolean young(ActorRef region) {
      Address a = region.path().address();
      if (a.hasLocalScope()) a = cluster.selfAddress();
      Seen s = seen.get(a);
      return s != null && System.nanoTime() - s.atNanos() < graceNanos;
    }
  }

  private static final class Follower extends AbstractActor {
    private final Members members;

    Follower(Members members) {
      this.members = members;
    }

    @Override
    public void preStart() {
      members.cluster.subscribe(getSelf(), ClusterEvent.initialStateAsEvents(), ClusterEvent.MemberUp.class,
          ClusterEvent.MemberWeaklyUp.class, ClusterEvent.MemberRemoved.class);
    }

    @Override
    public void postStop() {
      members.cluster.unsubscribe(getSelf());
    }

    @Override
    public Receive createReceive() {
      return receiveBuilder()
          .match(ClusterEvent.MemberUp.class, e -> members.up(e.member()))
          .match(ClusterEvent.MemberWeaklyUp.class, e -> members.up(e.member()))
          .match(ClusterEvent.MemberRemoved.class, e -> members.removed(e.member()))
          .build();
    }
  }

  @Override
  public void start(ActorSystem system) {
    // The coordinator starts only the strategy it was given: pass it on (Pekko's least-shard strategy
    // reads the cluster state it needs from the system).
    if (delegate instanceof ActorSystemDependentAllocationStrategy s) s.start(system);
    else if (delegate instanceof StartableAllocationStrategy s) s.start();
  }

  @Override
  public Future<ActorRef> allocateShard(ActorRef requester, String shardId,
      scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current) {
    return delegate.allocateShard(requester, shardId, settledOrAll(current));
  }

  @Override
  public Future<scala.collection.immutable.Set<String>> rebalance(
      scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current,
      scala.collection.immutable.Set<String> inProgress) {
    // Moving shards to a member still starting would make their sessions wait for it: not yet.
    boolean anyYoung = CollectionConverters.asJava(current).keySet().stream().anyMatch(young);
    if (anyYoung) return Future.successful(scala.collection.immutable.Set$.MODULE$.<String>empty());
    return delegate.rebalance(current, inProgress);
  }

  private scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> settledOrAll(
      scala.collection.immutable.Map<ActorRef, IndexedSeq<String>> current) {
    Map<ActorRef, IndexedSeq<String>> settled = new LinkedHashMap<>();
    CollectionConverters.asJava(current).forEach((region, shards) -> {
      if (!young.test(region)) settled.put(region, shards);
    });
    if (settled.isEmpty() || settled.size() == current.size()) return current;
    return scala.collection.immutable.Map$.MODULE$.from(CollectionConverters.asScala(settled));
  }
}
