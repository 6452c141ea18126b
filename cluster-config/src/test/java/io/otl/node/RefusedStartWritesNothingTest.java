package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.config.ConfigValidationException;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Trial t61: {@code OTL_CLUSTER_BOOTSTRAP=management} without a discovery method was refused only after
 * the node had claimed its journal folder (created {@code ./data}) and started its actor system. The
 * management mode's needs are now checked with every other setting: the folder is never created.
 */
class RefusedStartWritesNothingTest {

  private static String refusal(Path dir, Config settings) {
    Config node = settings.withFallback(TestDatabases.h2(dir.resolve("data")))
        .withFallback(TestDatabases.node(ConfigFactory.empty(), false));
    return assertThrows(ConfigValidationException.class, () -> TrainingNode.start(node)).getMessage();
  }

  @Test
  void managementWithoutADiscoveryMethodIsRefusedBeforeTheJournalFolderExists(@TempDir Path dir) {
    String m = refusal(dir, ConfigFactory.parseMap(Map.of("agentscope.training.cluster.bootstrap", "management")));
    assertTrue(m.contains("agentscope.training.cluster.bootstrap = \"management\": must be seed-nodes, or management "
        + "with a discovery method: set pekko.management.cluster.bootstrap.contact-point-discovery.discovery-method"), m);
    assertFalse(Files.exists(dir.resolve("data")), "a refused start wrote " + dir.resolve("data"));
  }

  /** Refused by ServingWiring once the journal was written, naming neither variable. */
  @Test
  void vllmLoraWithoutAServerIsRefusedBeforeTheJournalFolderExists(@TempDir Path dir) {
    String m = refusal(dir, ConfigFactory.parseMap(Map.of("agentscope.training.serving.backend", "vllm-lora"),
        "env variables"));
    assertTrue(m.contains("agentscope.training.serving.backend = \"vllm-lora\" (from environment variable "
        + "OTL_SERVING_BACKEND): must be auto or static when serving.vllm.url is empty and simulator.enabled = false"), m);
    assertTrue(m.contains("OTL_VLLM_URL"), m);
    assertFalse(Files.exists(dir.resolve("data")), "a refused start wrote " + dir.resolve("data"));
  }

  @Test
  void managementWithSeedNodesIsRefusedBeforeTheJournalFolderExists(@TempDir Path dir) {
    String m = refusal(dir, ConfigFactory.parseMap(Map.of(
            "agentscope.training.cluster.bootstrap", "management",
            "pekko.management.cluster.bootstrap.contact-point-discovery.discovery-method", "config",
            "pekko.cluster.seed-nodes", List.of("pekko://otl@127.0.0.1:25520"))));
    assertTrue(m.contains("management with pekko.cluster.seed-nodes = [] and OTL_SEED_NODES unset (found 1 seed node(s))"),
        m);
    assertFalse(m.contains("discovery method"), "the method is set: " + m);
    assertFalse(Files.exists(dir.resolve("data")), "a refused start wrote " + dir.resolve("data"));
  }
}
