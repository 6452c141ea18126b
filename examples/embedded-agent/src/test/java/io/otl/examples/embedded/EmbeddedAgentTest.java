package io.otl.examples.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The example runs end to end on an H2 journal in a temp folder, with no other service. */
class EmbeddedAgentTest {

  @Test
  void recordsSessionsHandlesNoModelVersionAndStopsCleanly() throws Exception {
    Path dir = Files.createTempDirectory("otl-embedded-");
    String url = "jdbc:h2:file:" + dir.resolve("journal").toAbsolutePath() + ";DATABASE_TO_UPPER=false;AUTO_SERVER=TRUE";
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    EmbeddedAgent.Result result = EmbeddedAgent.run(ConfigFactory.parseMap(Map.of(
            "agentscope.training.persistence", "h2",
            "agentscope.training.db.url", url,
            // Whatever the node writes stays in the temp dir, not in the module's source tree.
            "agentscope.training.training-runner.dataset-dir", dir.resolve("datasets").toString(),
            "agentscope.training.training-runner.checkpoint-root-dir", dir.resolve("checkpoints").toString(),
            "agentscope.training.data-collector.store-path", dir.resolve("trajectories").toString())),
        Map.of(), new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String out = bytes.toString(StandardCharsets.UTF_8);

    assertEquals(3, result.sessions().size(), out);
    assertEquals(3 * 5 + 1, result.accepted(), out);
    assertEquals(3 * 5, result.duplicates(), out);
    assertTrue(result.modelVersion().isEmpty(), out);
    assertTrue(out.contains("forms its own cluster"), out);
    assertTrue(out.contains("no model version for support-bot yet"), out);
    assertTrue(out.contains("mail me at [EMAIL]"), "PII is desensitized before it is stored:\n" + out);
    assertTrue(out.contains("status COMPLETED"), out);
    assertTrue(out.contains("node stopped"), out);
  }
}
