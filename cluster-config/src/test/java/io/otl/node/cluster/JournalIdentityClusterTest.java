package io.otl.node.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One journal per cluster (issue #22 item 1), with three node JVMs started as compose starts them
 * ({@link NodeProcess}): two share a PostgreSQL schema and form the cluster; a third, pointed at
 * another schema (another journal), lists the same seed nodes and must refuse to join, exit non-zero
 * naming both databases, and leave its own journal without a single event.
 */
class JournalIdentityClusterTest {
  private final List<NodeProcess> nodes = new ArrayList<>();
  private final RetryingClient client = new RetryingClient();
  private final ClusterMembers members = new ClusterMembers(client);

  @AfterEach
  void stop() {
    nodes.forEach(NodeProcess::close);
  }

  @Test
  void aNodeOnAnotherJournalDoesNotJoinExitsNamingBothDatabasesAndWritesNoEvent() throws Exception {
    Config clusterDb = TestDatabases.postgres();
    Config otherDb = TestDatabases.postgres();
    String clusterUrl = clusterDb.getString("agentscope.training.db.url");
    String otherUrl = otherDb.getString("agentscope.training.db.url");
    Path dir = Files.createDirectories(Path.of("target", "journal-identity-" + System.currentTimeMillis()));
    int[] ports = {NodeProcess.freePort(), NodeProcess.freePort(), NodeProcess.freePort()};
    String seeds = NodeProcess.seedNodes(ports);
    Map<String, String> env = NodeProcess.clusterEnv(seeds, clusterUrl, TestDatabases.PG_USER, TestDatabases.PG_PASSWORD);
    Map<String, String> wrongEnv = NodeProcess.clusterEnv(seeds, otherUrl, TestDatabases.PG_USER,
        TestDatabases.PG_PASSWORD);
    NodeProcess node1 = new NodeProcess("node1", ports[0], NodeProcess.freePort(), NodeProcess.freePort(), env, dir);
    NodeProcess node2 = new NodeProcess("node2", ports[1], NodeProcess.freePort(), NodeProcess.freePort(), env, dir);
    NodeProcess wrong = new NodeProcess("node3", ports[2], NodeProcess.freePort(), NodeProcess.freePort(), wrongEnv,
        dir);
    nodes.addAll(List.of(node1, node2, wrong));
    node1.start();
    node2.start();
    members.awaitUp(List.of(node1, node2), 2, Duration.ofSeconds(180)); // generous: shared CI machines

    wrong.start();
    OptionalInt exit = wrong.awaitExit(Duration.ofSeconds(120));
    String log = Files.readString(wrong.logFile().toPath(), StandardCharsets.UTF_8);
    assertTrue(exit.isPresent(), "the node on another journal still runs after 120 s\n" + wrong.tail(40));
    assertNotEquals(0, exit.getAsInt(), "exit code\n" + wrong.tail(40));
    assertTrue(log.contains("error: refused to join the cluster"), wrong.tail(40));
    String refusal = log.lines().filter(l -> l.startsWith("error: refused to join")).findFirst().orElseThrow();
    assertTrue(refusal.contains(schemaOf(clusterUrl)) && refusal.contains(schemaOf(otherUrl)),
        "names both databases: " + refusal);

    assertEquals(0, events(otherUrl), "events in the refused node's journal");
    // The cluster kept its two members, never a third, and still serves.
    assertEquals(2, members.up(node1).orElseThrow(), "members Up on node1");
    assertFalse(members.json(node1).orElseThrow().toString().contains(":" + ports[2]), "node3 is not a member");
    Optional<RetryingClient.Reply> write = client.send("POST", List.of(node1.httpPort, node2.httpPort), 0,
        "/v1/sessions/identity-s1/events", """
            {"agentId":"agent-1","events":[{"type":"message","eventId":"e-1","role":"user","content":"hi"}]}""",
        Duration.ofSeconds(60));
    assertTrue(write.isPresent() && write.get().status() == 202, "the cluster still takes writes: " + write);
    assertTrue(events(clusterUrl) > 0, "the write is in the cluster's journal");
    assertEquals(0, events(otherUrl), "and not in the other one");
  }

  private static String schemaOf(String url) {
    return url.substring(url.indexOf("currentSchema=") + "currentSchema=".length());
  }

  private static long events(String url) throws Exception {
    try (Connection c = DriverManager.getConnection(url, TestDatabases.PG_USER, TestDatabases.PG_PASSWORD);
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT count(*) FROM event_journal")) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
