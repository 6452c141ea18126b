package io.otl.node.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.typesafe.config.Config;
import io.otl.node.testing.TestDatabases;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Issue #22's split brain, reproduced with three node JVMs ({@link NodeProcess}) on one PostgreSQL
 * journal: node 1 (the first seed node) is killed with kill -9 and restarted while nodes 2 and 3 are
 * frozen (kill -STOP) for longer than seed-node-timeout, as a loaded machine starves them. Before the
 * cluster lease, node 1 joined itself after seed-node-timeout and formed a second cluster; now it must
 * wait for the running cluster and end as one of its three members, having "joined itself" only once,
 * at the first start.
 */
class FirstSeedRestartTest {
  private static final String SELF_JOIN = "is JOINING itself";

  private final List<NodeProcess> nodes = new ArrayList<>();
  private final RetryingClient client = new RetryingClient();
  private final ClusterMembers members = new ClusterMembers(client);
  private final List<NodeProcess> frozen = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (NodeProcess n : frozen) if (n.alive()) n.signal("CONT");
    nodes.forEach(NodeProcess::close);
  }

  @Test
  void aRestartedFirstSeedNodeJoinsTheFrozenClusterInsteadOfFormingASecondOne() throws Exception {
    Config db = TestDatabases.postgres();
    String url = db.getString("agentscope.training.db.url");
    Path dir = Files.createDirectories(Path.of("target", "first-seed-" + System.currentTimeMillis()));
    int[] ports = {NodeProcess.freePort(), NodeProcess.freePort(), NodeProcess.freePort()};
    String seeds = NodeProcess.seedNodes(ports);
    Map<String, String> env = NodeProcess.clusterEnv(seeds, url, TestDatabases.PG_USER, TestDatabases.PG_PASSWORD);
    for (int i = 0; i < 3; i++) {
      nodes.add(new NodeProcess("node" + (i + 1), ports[i], NodeProcess.freePort(), NodeProcess.freePort(), env, dir)
          // The freeze below may outlast a slow JVM start: a window that cannot lapse during the test.
          .withConfig("agentscope.training.cluster.lease-window = 120s"));
    }
    NodeProcess node1 = nodes.get(0);
    NodeProcess node2 = nodes.get(1);
    NodeProcess node3 = nodes.get(2);
    nodes.forEach(NodeProcess::start);
    awaitThat("3 members Up on every node", Duration.ofSeconds(240), () -> nodes.stream().allMatch(n -> {
      if (!n.alive()) fail(n.name + " exited\n" + n.tail(60));
      return members.up(n).orElse(0) == 3;
    }));
    awaitThat("nodes 2 and 3 heartbeat the lease", Duration.ofSeconds(60),
        () -> leaseRows(url, ports[1], ports[2]) == 2);

    node1.kill();
    node2.signal("STOP");
    frozen.add(node2);
    node3.signal("STOP");
    frozen.add(node3);
    node1.start();
    // Node 1 read the lease and keeps asking the frozen seeds: two seed-node-timeouts have passed
    // without an answer, where Pekko's first seed node would have formed its own cluster after one.
    awaitThat("node 1 reads the lease and keeps trying to join", Duration.ofSeconds(180),
        () -> log(node1).contains("will not form a new cluster")
            && log(node1).contains("Couldn't join seed nodes after"));
    node2.signal("CONT");
    node3.signal("CONT");
    frozen.clear();

    awaitThat("node 1 is one of 3 members Up", Duration.ofSeconds(240), () -> {
      if (!node1.alive()) fail("node 1 exited\n" + node1.tail(60));
      return members.up(node1).orElse(0) == 3 && members.up(node2).orElse(0) == 3;
    });
    String log = log(node1);
    assertEquals(1, count(log, SELF_JOIN), "node 1 formed a cluster at its first start only (clustersFormed)\n"
        + node1.tail(60));
    for (NodeProcess n : List.of(node2, node3)) assertEquals(0, count(log(n), SELF_JOIN), n.name + " formed a cluster");
  }

  private static int count(String text, String what) {
    int n = 0;
    for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) n++;
    return n;
  }

  private static String log(NodeProcess n) {
    try {
      return Files.readString(n.logFile().toPath(), StandardCharsets.UTF_8);
    } catch (java.io.IOException e) {
      return "";
    }
  }

  private static int leaseRows(String url, int... ports) {
    try (Connection c = DriverManager.getConnection(url, TestDatabases.PG_USER, TestDatabases.PG_PASSWORD);
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT address FROM otl_cluster_members")) {
      int found = 0;
      while (rs.next()) {
        for (int p : ports) if (rs.getString(1).endsWith(":" + p)) found++;
      }
      return found;
    } catch (Exception e) {
      return 0;
    }
  }

  /** Polls {@code condition} until it holds; fails with every node's log tail after {@code bound} (hang guard). */
  private void awaitThat(String what, Duration bound, BooleanSupplier condition) throws InterruptedException {
    long end = System.nanoTime() + bound.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > end) {
        fail(what + ": not within " + bound.toSeconds() + " s\n"
            + nodes.stream().map(n -> n.tail(25)).collect(Collectors.joining("\n")));
      }
      Thread.sleep(250);
    }
  }
}
