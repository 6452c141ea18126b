package io.otl.node.cluster;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.otl.node.testing.TestDatabases;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One way of serving per cluster (trial t133): node JVMs as compose starts them ({@link NodeProcess})
 * on one journal. The cluster serves with vllm-lora and a base model v0 from the AgentScope
 * {@code model} section; a node with the embedded example's settings (simulator off: the static
 * backend, no base model) must refuse to join and exit non-zero naming each differing setting with
 * both values, while a node with the cluster's settings joins.
 */
class ServingAgreementClusterTest {
  /** The cluster's serving settings. Nothing listens on port 9: no call reaches it in this test. */
  private static final String CLUSTER_SERVING = """
      agentscope.training.serving { backend = vllm-lora, vllm.url = "http://127.0.0.1:9" }
      agentscope.model { base-url = "http://127.0.0.1:9/v1", model-name = "base-7b", api-key = "sk-never-sent" }
      """;

  private final List<NodeProcess> nodes = new ArrayList<>();
  private final RetryingClient client = new RetryingClient();
  private final ClusterMembers members = new ClusterMembers(client);

  @AfterEach
  void stop() {
    nodes.forEach(NodeProcess::close);
  }

  @Test
  void aNodeWithOtherServingSettingsDoesNotJoinAndOneWithTheClustersDoes() throws Exception {
    Config db = TestDatabases.postgres();
    String url = db.getString("agentscope.training.db.url");
    Path dir = Files.createDirectories(Path.of("target", "serving-agreement-" + System.currentTimeMillis()));
    int[] ports = {NodeProcess.freePort(), NodeProcess.freePort(), NodeProcess.freePort()};
    String seeds = NodeProcess.seedNodes(ports);
    Map<String, String> env = NodeProcess.clusterEnv(seeds, url, TestDatabases.PG_USER, TestDatabases.PG_PASSWORD);
    NodeProcess node1 = new NodeProcess("node1", ports[0], NodeProcess.freePort(), NodeProcess.freePort(), env, dir)
        .withConfig(CLUSTER_SERVING);
    // The embedded example's settings: OTL_SIMULATOR_ENABLED=false and nothing else, so static and no v0.
    NodeProcess other = new NodeProcess("node2", ports[1], NodeProcess.freePort(), NodeProcess.freePort(), env, dir);
    NodeProcess same = new NodeProcess("node3", ports[2], NodeProcess.freePort(), NodeProcess.freePort(), env, dir)
        .withConfig(CLUSTER_SERVING);
    nodes.addAll(List.of(node1, other, same));
    node1.start();
    members.awaitUp(List.of(node1), 1, Duration.ofSeconds(180)); // generous: shared CI machines

    other.start();
    OptionalInt exit = other.awaitExit(Duration.ofSeconds(120));
    assertTrue(exit.isPresent(), "the node with other serving settings still runs after 120 s\n" + other.tail(40));
    assertNotEquals(0, exit.getAsInt(), "exit code\n" + other.tail(40));
    String log = Files.readString(other.logFile().toPath(), StandardCharsets.UTF_8);
    String refusal = log.lines().filter(l -> l.startsWith("error: refused to join the cluster")).findFirst()
        .orElseThrow(() -> new AssertionError(other.tail(40)));
    assertTrue(refusal.contains("serving backend") && refusal.contains("this node static, the cluster vllm-lora"),
        refusal);
    assertTrue(refusal.contains("base model v0") && refusal.contains("this node none, the cluster base-7b"), refusal);
    assertTrue(refusal.contains("this node none, the cluster http://127.0.0.1:9/v1"), refusal);
    assertTrue(refusal.contains("start it with the cluster's serving settings"), refusal);
    assertFalse(log.contains("sk-never-sent"), "no API key travels");
    assertFalse(members.json(node1).orElseThrow().toString().contains(":" + ports[1]), "node2 is not a member");

    same.start();
    members.awaitUp(List.of(node1, same), 2, Duration.ofSeconds(180));
    assertFalse(Files.readString(same.logFile().toPath(), StandardCharsets.UTF_8).contains("refused to join"),
        same.tail(40));
  }
}
