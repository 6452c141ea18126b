package io.otl.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValueFactory;
import io.otl.persistence.ClusterLease;
import io.otl.persistence.JournalSchema;
import io.otl.persistence.JournalSettings;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.pekko.Done;
import org.apache.pekko.actor.Address;
import org.apache.pekko.actor.AddressFromURIString;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a restarted first seed node from forming a second cluster over a live journal (issue #22).
 *
 * <p>Pekko lets the first of {@code pekko.cluster.seed-nodes} join itself when no other seed answers
 * within {@code seed-node-timeout}; busy survivors answer late, so a restarted node 1 formed its own
 * cluster and both clusters wrote the same sessions. Every Up member therefore heartbeats a row in the
 * journal database ({@link ClusterLease}); at start-up a first seed node that sees another member's
 * heartbeat younger than {@code agentscope.training.cluster.lease-window} moves itself to the end of
 * its seed list, so Pekko only joins the others (and retries until it can). When every other
 * heartbeat has gone stale while it still waits (the whole cluster was down after all), it falls back
 * to the configured list and may form the cluster as before. A cold start of the whole cluster finds
 * no fresh heartbeat and behaves as it always did.
 */
final class SeedLease {
  private static final Logger log = LoggerFactory.getLogger(SeedLease.class);

  static final String WINDOW_KEY = ClusterSettings.WINDOW_KEY;

  /**
   * What {@link #arrange} decided.
   *
   * @param config the node's config, with the seed list reordered when {@code moved}
   * @param configured the seed nodes as configured
   * @param moved true when this first seed node was moved behind the others
   * @param settings the node's cluster settings, read once at start-up
   */
  record Arrangement(Config config, List<String> configured, boolean moved, ClusterSettings settings) {}

  private SeedLease() {}

  /**
   * The seed list {@code self} must use: unchanged unless {@code self} is first and another member is
   * alive, then with {@code self} moved to the end (Pekko's JoinSeedNodeProcess never joins itself).
   */
  static List<String> reorder(List<String> seeds, String self, boolean othersAlive) {
    if (!othersAlive || seeds.size() < 2 || !sameAddress(seeds.get(0), self)) return seeds;
    List<String> moved = new ArrayList<>(seeds.subList(1, seeds.size()));
    moved.add(seeds.get(0));
    return List.copyOf(moved);
  }

  /** Applies the rule before the ActorSystem exists: reads the lease once when this node is the first seed. */
  static Arrangement arrange(Config config, ClusterSettings settings, JournalSettings journal) {
    List<String> seeds = config.getStringList("pekko.cluster.seed-nodes");
    if (settings.bootstrap() != ClusterMembership.Mode.SEED_NODES) {
      return new Arrangement(config, seeds, false, settings);
    }
    String self = selfAddress(config);
    if (seeds.isEmpty() || (seeds.size() == 1 && self != null && sameAddress(seeds.get(0), self))) {
      refuseBesideLiveCluster(seeds.isEmpty(), self, settings.leaseWindow(), journal);
      return new Arrangement(config, seeds, false, settings);
    }
    if (seeds.size() < 2) return new Arrangement(config, seeds, false, settings);
    if (self == null || !sameAddress(seeds.get(0), self)) return new Arrangement(config, seeds, false, settings);
    Duration window = settings.leaseWindow();
    List<ClusterLease.Alive> alive;
    try (Connection c = JournalSchema.connect(journal)) {
      alive = ClusterLease.othersAlive(c, journal.kind(), self, window);
    } catch (SQLException | RuntimeException e) {
      // The journal was reachable a moment ago (schema check); without the lease keep Pekko's behaviour.
      log.warn("cluster lease unreadable in {} ({}); first seed node {} keeps its seed order", journal.safeUrl(),
          e.getMessage(), self);
      return new Arrangement(config, seeds, false, settings);
    }
    if (alive.isEmpty()) return new Arrangement(config, seeds, false, settings);
    List<String> reordered = reorder(seeds, self, true);
    log.info("first seed node {} will not form a new cluster: member {} heartbeated {} ms ago (lease-window {}); "
        + "joining the running cluster through seed nodes {}", self, alive.get(0).address(),
        alive.get(0).age().toMillis(), window, reordered.subList(0, reordered.size() - 1));
    return new Arrangement(config.withValue("pekko.cluster.seed-nodes", ConfigValueFactory.fromIterable(reordered)),
        seeds, true, settings);
  }

  /**
   * A node that can only join itself (no seed nodes, or itself as the only one) forms a cluster of its own.
   * Beside a live cluster on the same journal that is a second cluster over it (trial t175: a node started
   * without OTL_SEED_NODES registered a version the running cluster's entity then failed to write after, a
   * 503), so it does not start. A cold start finds no fresh heartbeat; an unreadable lease keeps Pekko's way.
   */
  private static void refuseBesideLiveCluster(boolean noSeeds, String self, Duration window, JournalSettings journal) {
    List<ClusterLease.Alive> alive;
    try (Connection c = JournalSchema.connect(journal)) {
      // A picked port (0) has no address yet: every row is another member's.
      alive = ClusterLease.othersAlive(c, journal.kind(), self == null ? "" : self, window);
    } catch (SQLException | RuntimeException e) {
      log.warn("cluster lease unreadable in {} ({}); forming a cluster of one without checking for a running one",
          journal.safeUrl(), e.getMessage());
      return;
    }
    // A member killed a moment ago (kill -9, then a restart at another port) still has a fresh heartbeat:
    // only one whose cluster port answers is running. A port that refuses the connection is gone.
    alive = alive.stream().filter(SeedLease::listening).toList();
    if (alive.isEmpty()) return;
    throw new IllegalStateException("a cluster is running on the journal " + journal.safeUrl() + ": member "
        + alive.get(0).address() + " heartbeated " + alive.get(0).age().toMillis() + " ms ago (within "
        + WINDOW_KEY + " = " + window.toSeconds() + "s), and this node, with "
        + (noSeeds ? "no seed nodes" : "itself as its only seed node")
        + ", would form a second cluster over that journal, whose writes collide with the running one's; set "
        + "OTL_SEED_NODES (pekko.cluster.seed-nodes) to that cluster's seed nodes to join it; docs/operations.md");
  }

  /**
   * Heartbeats while this node is Up, and, when {@link #arrange} moved it, falls back to the configured
   * seed list once no other member's heartbeat is fresh and it is still not a member.
   */
  static void start(ActorSystem<?> system, JournalSettings journal, Arrangement arrangement) {
    ClusterSettings settings = arrangement.settings();
    if (settings.bootstrap() != ClusterMembership.Mode.SEED_NODES) return; // pekko-management decides instead
    // A node of one on a shared database at a port of its own shows it is alive, so that a second node of one
    // does not form another cluster over its journal (trial t175). With a picked port (0) it does not: its
    // restart comes back at another address, which its own last heartbeat would refuse for a lease-window.
    boolean oneOnSharedJournal = journal.kind() == JournalSettings.Kind.POSTGRES
        && system.settings().config().getInt("pekko.remote.artery.canonical.port") != 0;
    if (arrangement.configured().isEmpty() && !oneOnSharedJournal) return;
    Duration every = settings.leaseHeartbeat();
    Duration window = settings.leaseWindow();
    Cluster cluster = Cluster.get(system.classicSystem());
    String self = cluster.selfAddress().toString();
    long incarnation = cluster.selfUniqueAddress().longUid();
    Executor blocking = system.dispatchers().lookup(DispatcherSelector.blocking());
    Heartbeat beat = new Heartbeat(journal, self, incarnation, arrangement, window, cluster);
    Cancellable task = system.scheduler().scheduleWithFixedDelay(every, every, beat::tick,
        system.dispatchers().lookup(DispatcherSelector.blocking()));
    CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseBeforeActorSystemTerminate(), "release-lease",
        () -> CompletableFuture.supplyAsync(() -> {
          task.cancel();
          beat.release();
          return Done.getInstance();
        }, blocking));
  }

  /** One node's heartbeat; runs on the blocking dispatcher, one tick at a time. */
  private static final class Heartbeat {
    private final JournalSettings journal;
    private final String self;
    private final long incarnation;
    private final Arrangement arrangement;
    private final Duration window;
    private final Cluster cluster;
    private final AtomicBoolean fellBack = new AtomicBoolean(false);
    private Connection connection;
    private boolean failing;
    private boolean everMember;

    Heartbeat(JournalSettings journal, String self, long incarnation, Arrangement arrangement, Duration window,
        Cluster cluster) {
      this.journal = journal;
      this.self = self;
      this.incarnation = incarnation;
      this.arrangement = arrangement;
      this.window = window;
      this.cluster = cluster;
    }

    synchronized void tick() {
      MemberStatus status = cluster.selfMember().status();
      if (status != MemberStatus.removed()) everMember = true;
      try {
        if (status == MemberStatus.up()) {
          ClusterLease.heartbeat(connection(), journal.kind(), self, incarnation);
        } else if (arrangement.moved() && !everMember && !fellBack.get()
            && ClusterLease.othersAlive(connection(), journal.kind(), self, window).isEmpty()) {
          // Not a member yet (Pekko reports Removed before joining) and nobody heartbeats any more.
          fellBack.set(true);
          log.info("first seed node {}: no member heartbeated within lease-window {}; the cluster is down, "
              + "joining seed nodes {} in their configured order (may form the cluster)", self, window,
              arrangement.configured());
          List<Address> seeds = arrangement.configured().stream().map(AddressFromURIString::parse).toList();
          cluster.joinSeedNodes(seeds);
        }
        if (failing) log.info("cluster lease of {} written again", self);
        failing = false;
      } catch (SQLException | RuntimeException e) {
        if (!failing) log.warn("cluster lease of {} not written ({}); retrying every tick", self, e.getMessage());
        failing = true;
        close();
      }
    }

    synchronized void release() {
      try {
        ClusterLease.release(connection(), journal.kind(), self, incarnation);
      } catch (SQLException | RuntimeException e) {
        log.debug("cluster lease of {} not released: {}", self, e.getMessage());
      } finally {
        close();
      }
    }

    private Connection connection() {
      if (connection == null) connection = JournalSchema.connect(journal);
      return connection;
    }

    private void close() {
      try {
        if (connection != null) connection.close();
      } catch (SQLException ignored) {
        // already broken
      }
      connection = null;
    }
  }

  /**
   * Whether a member's cluster port takes a connection. Only a refusal means gone: a timeout (a firewall,
   * another host's slow network) or an address that cannot be read counts as running, so that doubt never
   * forms a second cluster.
   */
  static boolean listening(ClusterLease.Alive member) {
    Address address;
    try {
      address = AddressFromURIString.parse(member.address());
    } catch (RuntimeException e) {
      return true;
    }
    if (address.host().isEmpty() || address.port().isEmpty()) return true;
    try (java.net.Socket socket = new java.net.Socket()) {
      socket.connect(new java.net.InetSocketAddress(address.host().get(), (Integer) address.port().get()), 2000);
      return true;
    } catch (java.net.ConnectException e) {
      log.info("member {} heartbeated {} ms ago but its cluster port refuses connections: taken as gone (killed)",
          member.address(), member.age().toMillis());
      return false;
    } catch (java.io.IOException e) {
      return true;
    }
  }

  /** This node's address as its seed-node entries spell it, or null when it cannot be a seed (port 0). */
  static String selfAddress(Config config) {
    String host = config.getString("pekko.remote.artery.canonical.hostname");
    int port = config.getInt("pekko.remote.artery.canonical.port");
    if (port == 0) return null;
    try {
      if ("<getHostAddress>".equals(host)) host = InetAddress.getLocalHost().getHostAddress();
      else if ("<getHostName>".equals(host)) host = InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      return null;
    }
    return "pekko://otl@" + host + ":" + port;
  }

  private static boolean sameAddress(String seed, String self) {
    try {
      Address a = AddressFromURIString.parse(seed);
      Address b = AddressFromURIString.parse(self);
      return a.equals(b);
    } catch (RuntimeException e) {
      return false;
    }
  }
}
