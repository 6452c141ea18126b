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
    assertUnchanged(SeedLease.arrange(node(25521), journal));

    try (Connection c = JournalSchema.connect(journal)) {
      // Its own row from before the restart, however fresh, is no sign of another cluster.
      ClusterLease.heartbeat(c, journal.kind(), N1, 1L);
      assertUnchanged(SeedLease.arrange(node(25521), journal));

      // Another member heartbeated long ago: the cluster is down, today's behaviour.
      ClusterLease.heartbeatAt(c, journal.kind(), N2, 2L, OffsetDateTime.now().minusHours(1));
      assertUnchanged(SeedLease.arrange(node(25521), journal));

      // Another member heartbeated just now: a cluster is alive, node 1 must only join it.
      ClusterLease.heartbeat(c, journal.kind(), N3, 3L);
      SeedLease.Arrangement moved = SeedLease.arrange(node(25521), journal);
      assertTrue(moved.moved());
      assertEquals(List.of(N2, N3, N1), moved.config().getStringList("pekko.cluster.seed-nodes"));
      assertEquals(SEEDS, moved.configured());

      // A node that is not the first seed never self-joins anyway: unchanged.
      assertUnchanged(SeedLease.arrange(node(25522), journal));

      // A graceful leave removes the row of that incarnation only.
      ClusterLease.release(c, journal.kind(), N3, 99L);
      assertEquals(1, ClusterLease.othersAlive(c, journal.kind(), N1, Duration.ofSeconds(10)).size());
      ClusterLease.release(c, journal.kind(), N3, 3L);
      assertTrue(ClusterLease.othersAlive(c, journal.kind(), N1, Duration.ofSeconds(10)).isEmpty());
      assertUnchanged(SeedLease.arrange(node(25521), journal));
    }
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

  @Test
  void onlyTheFirstSeedIsMovedAndOnlyWhenAClusterIsAlive() {
    assertEquals(List.of(N2, N3, N1), SeedLease.reorder(SEEDS, N1, true));
    assertEquals(SEEDS, SeedLease.reorder(SEEDS, N1, false));
    assertEquals(SEEDS, SeedLease.reorder(SEEDS, N2, true));
    assertEquals(List.of(N1), SeedLease.reorder(List.of(N1), N1, true));
  }
}
