package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.ClusterLease;
import io.otl.persistence.JournalSchema;
import io.otl.persistence.JournalSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import org.apache.pekko.cluster.Cluster;
import org.apache.pekko.cluster.MemberStatus;
import org.junit.jupiter.api.Test;

/**
 * The first-seed rule of issue #22 over real databases (H2 file and the shared PostgreSQL): a first
 * seed node that finds another member's fresh heartbeat in the journal's lease table moves itself
 * behind the other seeds; a stale heartbeat, its own row, or not being first leaves the order alone.
 */
class SeedLeaseTest {
  private static final String N1 = "pekko://otl@127.0.0.1:25521";
  private static final String N2 = "pekko://otl@127.0.0.1:25522";
  private static final String N3 = "pekko://otl@127.0.0.1:25523";
  private static final List<String> SEEDS = List.of(N1, N2, N3);

  @Test
  void h2() throws Exception {
    Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target").toAbsolutePath()), "lease-");
    check(new JournalSettings(JournalSettings.Kind.H2,
        "jdbc:h2:file:" + dir.resolve("journal") + ";DATABASE_TO_UPPER=false;WRITE_DELAY=0", "sa", "", 2));
  }

  @Test
  void postgres() throws Exception {
    Config db = TestDatabases.postgres();
    check(new JournalSettings(JournalSettings.Kind.POSTGRES, db.getString("agentscope.training.db.url"),
        TestDatabases.PG_USER, TestDatabases.PG_PASSWORD, 2));
  }

  private static void check(JournalSettings journal) throws Exception {
    JournalSchema.ensure(journal);
    JournalSchema.ensure(journal); // the lease table's DDL is idempotent like the rest

    // Cold start: an empty table, the first seed keeps its place (and may form the cluster).
    assertUnchanged(arrange(25521, journal));

    try (Connection c = JournalSchema.connect(journal)) {
      // Its own row from before the restart, however fresh, is no sign of another cluster.
      ClusterLease.heartbeat(c, journal.kind(), N1, 1L);
      assertUnchanged(arrange(25521, journal));

      // Another member heartbeated long ago: the cluster is down, today's behaviour.
      ClusterLease.heartbeatAt(c, journal.kind(), N2, 2L, OffsetDateTime.now().minusHours(1));
      assertUnchanged(arrange(25521, journal));

      // Another member heartbeated just now: a cluster is alive, node 1 must only join it.
      ClusterLease.heartbeat(c, journal.kind(), N3, 3L);
      SeedLease.Arrangement moved = arrange(25521, journal);
      assertTrue(moved.moved());
      assertEquals(List.of(N2, N3, N1), moved.config().getStringList("pekko.cluster.seed-nodes"));
      assertEquals(SEEDS, moved.configured());

      // A node that is not the first seed never self-joins anyway: unchanged.
      assertUnchanged(arrange(25522, journal));

      // A graceful leave removes the row of that incarnation only.
      ClusterLease.release(c, journal.kind(), N3, 99L);
      assertEquals(1, ClusterLease.othersAlive(c, journal.kind(), N1, Duration.ofSeconds(10)).size());
      ClusterLease.release(c, journal.kind(), N3, 3L);
      assertTrue(ClusterLease.othersAlive(c, journal.kind(), N1, Duration.ofSeconds(10)).isEmpty());
      assertUnchanged(arrange(25521, journal));
    }
  }

  private static SeedLease.Arrangement arrange(int port, JournalSettings journal) {
    Config config = node(port);
    return SeedLease.arrange(config, ClusterSettings.fromConfig(config), journal);
  }

  private static void assertUnchanged(SeedLease.Arrangement a) {
    assertFalse(a.moved());
    assertEquals(a.configured(), a.config().getStringList("pekko.cluster.seed-nodes"));
  }

  private static Config node(int port) {
    return ConfigFactory.parseMap(Map.of(
        "pekko.cluster.seed-nodes", SEEDS,
        "pekko.remote.artery.canonical.hostname", "127.0.0.1",
        "pekko.remote.artery.canonical.port", port,
        SeedLease.WINDOW_KEY, "10s"));
  }

  /**
   * A full-cluster restart within the window: node 1 finds the others' last heartbeats fresh, waits
   * behind them, and once they have gone stale (nobody is Up to renew them) joins in the configured
   * order and forms the cluster, as a cold start would. A real node over the shared PostgreSQL.
   */
  @Test
  void aFirstSeedNodeWaitingForADeadClusterFormsItOnceEveryHeartbeatIsStale() throws Exception {
    Config db = TestDatabases.postgres();
    JournalSettings journal = new JournalSettings(JournalSettings.Kind.POSTGRES,
        db.getString("agentscope.training.db.url"), TestDatabases.PG_USER, TestDatabases.PG_PASSWORD, 2);
    JournalSchema.ensure(journal);
    int port = freePort();
    String self = "pekko://otl@127.0.0.1:" + port;
    // Two members that were Up a moment ago and are gone (nothing listens on their ports).
    String gone2 = "pekko://otl@127.0.0.1:" + freePort();
    String gone3 = "pekko://otl@127.0.0.1:" + freePort();
    try (Connection c = JournalSchema.connect(journal)) {
      ClusterLease.heartbeat(c, journal.kind(), gone2, 2L);
      ClusterLease.heartbeat(c, journal.kind(), gone3, 3L);
    }
    Config overrides = ConfigFactory.parseMap(Map.of(
        "pekko.cluster.seed-nodes", List.of(self, gone2, gone3),
        "pekko.remote.artery.canonical.hostname", "127.0.0.1",
        "pekko.remote.artery.canonical.port", port,
        SeedLease.WINDOW_KEY, "3s")).withFallback(TestDatabases.node(db, false));
    try (TrainingNode node = TrainingNode.start(overrides)) {
      assertEquals(List.of(gone2, gone3, self), node.system().settings().config()
          .getStringList("pekko.cluster.seed-nodes"), "node 1 first waited behind the live-looking seeds");
      Cluster cluster = Cluster.get(node.system().classicSystem());
      long end = System.nanoTime() + Duration.ofSeconds(120).toNanos(); // hang guard, not a timing claim
      while (cluster.selfMember().status() != MemberStatus.up()) {
        assertTrue(System.nanoTime() < end, "node 1 never formed the cluster: " + cluster.selfMember());
        Thread.sleep(200);
      }
      assertEquals(1, cluster.state().members().size());
      // Up, it heartbeats the lease itself: a later restart of another seed would find it alive.
      try (Connection c = JournalSchema.connect(journal)) {
        long end2 = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (ClusterLease.othersAlive(c, journal.kind(), gone2, Duration.ofSeconds(10)).stream()
            .noneMatch(a -> a.address().equals(self))) {
          assertTrue(System.nanoTime() < end2, "node 1 never heartbeated");
          Thread.sleep(200);
        }
      }
    }
  }

  /**
   * Trial t175: a node started on a running cluster's journal without OTL_SEED_NODES (or with only
   * itself as seed) formed a second cluster over it; its registration of a model version answered 201
   * and the running cluster's next write to that agent a 503 (the journal's key refused it), with the
   * two clusters' states apart. Such a node now refuses to start, naming the live member and the
   * setting that joins it; with no live heartbeat (a cold start) it forms its cluster as before.
   */
  @Test
  void aNodeThatWouldFormItsOwnClusterBesideALiveOneRefusesToStart() throws Exception {
    Config db = TestDatabases.postgres();
    JournalSettings journal = new JournalSettings(JournalSettings.Kind.POSTGRES,
        db.getString("agentscope.training.db.url"), TestDatabases.PG_USER, TestDatabases.PG_PASSWORD, 2);
    JournalSchema.ensure(journal);
    Config alone = ConfigFactory.parseMap(Map.of(
        "pekko.cluster.seed-nodes", List.of(),
        "pekko.remote.artery.canonical.hostname", "127.0.0.1",
        "pekko.remote.artery.canonical.port", 25524,
        SeedLease.WINDOW_KEY, "10s"));
    Config onlyItself = alone.withValue("pekko.cluster.seed-nodes",
        com.typesafe.config.ConfigValueFactory.fromIterable(List.of("pekko://otl@127.0.0.1:25524")));
    Config pickedPort = alone.withValue("pekko.remote.artery.canonical.port",
        com.typesafe.config.ConfigValueFactory.fromAnyRef(0));

    // Nobody heartbeats: a cluster of one forms as it always did.
    assertUnchanged(SeedLease.arrange(alone, ClusterSettings.fromConfig(alone), journal));
    // A member killed a moment ago: its heartbeat is fresh, its port refuses. A restart at another port
    // (kill -9, then a new port) starts.
    String killed = "pekko://otl@127.0.0.1:" + freePort();
    try (Connection c = JournalSchema.connect(journal)) {
      ClusterLease.heartbeat(c, journal.kind(), killed, 1L);
    }
    assertUnchanged(SeedLease.arrange(alone, ClusterSettings.fromConfig(alone), journal));
    // A running member: fresh heartbeat, and its cluster port takes connections.
    try (java.net.ServerSocket running = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress())) {
      String live = "pekko://otl@127.0.0.1:" + running.getLocalPort();
      try (Connection c = JournalSchema.connect(journal)) {
        ClusterLease.heartbeat(c, journal.kind(), live, 2L);
      }
      for (Config config : List.of(alone, onlyItself, pickedPort)) {
        IllegalStateException refused = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
            () -> SeedLease.arrange(config, ClusterSettings.fromConfig(config), journal));
        String message = refused.getMessage();
        assertTrue(message.contains(live), message);
        assertTrue(message.contains("OTL_SEED_NODES (pekko.cluster.seed-nodes)"), message);
        assertTrue(message.contains("second cluster"), message);
      }
    }
  }

  /**
   * A node of one on PostgreSQL at a port of its own heartbeats too, so a second node of one started on
   * its journal is refused like one beside a seed-node cluster (trial t175). A picked port (0, the
   * tests' in-process nodes) does not: its restart comes back at another address and would be refused.
   */
  @Test
  void aNodeOfOneOnPostgresHeartbeatsSoASecondNodeOfOneIsRefused() throws Exception {
    Config db = TestDatabases.postgres();
    JournalSettings journal = new JournalSettings(JournalSettings.Kind.POSTGRES,
        db.getString("agentscope.training.db.url"), TestDatabases.PG_USER, TestDatabases.PG_PASSWORD, 2);
    int port = freePort();
    String self = "pekko://otl@127.0.0.1:" + port;
    Config overrides = ConfigFactory.parseMap(Map.of(
        "pekko.cluster.seed-nodes", List.of(),
        "pekko.remote.artery.canonical.hostname", "127.0.0.1",
        "pekko.remote.artery.canonical.port", port)).withFallback(TestDatabases.node(db, false));
    try (TrainingNode node = TrainingNode.start(overrides)) {
      try (Connection c = JournalSchema.connect(journal)) {
        long end = System.nanoTime() + Duration.ofSeconds(60).toNanos(); // hang guard, not a timing claim
        while (ClusterLease.othersAlive(c, journal.kind(), N2, Duration.ofSeconds(10)).stream()
            .noneMatch(a -> a.address().equals(self))) {
          assertTrue(System.nanoTime() < end, "the node of one never heartbeated");
          Thread.sleep(200);
        }
      }
      Config second = ConfigFactory.parseMap(Map.of(
          "pekko.cluster.seed-nodes", List.of(),
          "pekko.remote.artery.canonical.hostname", "127.0.0.1",
          "pekko.remote.artery.canonical.port", 25525,
          SeedLease.WINDOW_KEY, "10s"));
      IllegalStateException refused = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
          () -> SeedLease.arrange(second, ClusterSettings.fromConfig(second), journal));
      assertTrue(refused.getMessage().contains(self), refused.getMessage());
    }
  }

  private static int freePort() {
    return io.otl.node.testing.FreePorts.take();
  }

  @Test
  void onlyTheFirstSeedIsMovedAndOnlyWhenAClusterIsAlive() {
    assertEquals(List.of(N2, N3, N1), SeedLease.reorder(SEEDS, N1, true));
    assertEquals(SEEDS, SeedLease.reorder(SEEDS, N1, false));
    assertEquals(SEEDS, SeedLease.reorder(SEEDS, N2, true));
    assertEquals(List.of(N1), SeedLease.reorder(List.of(N1), N1, true));
  }
}
