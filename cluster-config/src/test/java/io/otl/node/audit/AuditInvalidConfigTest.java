package io.otl.node.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.ToolRun;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@code --config} file the node would refuse is a mistake of the command line for {@code audit} as
 * for {@code export}: exit 2 with the file's errors, nothing read. {@code audit} exited 1, its code for
 * "not found / journal unreadable", for the very file {@code export} refused with 2 (trial t73).
 */
class AuditInvalidConfigTest {

  @Test
  void anInvalidConfigFileExitsTwoAsForExport(@TempDir Path dir) throws Exception {
    Path badValue = Files.writeString(dir.resolve("bad.conf"),
        "agentscope.training.training-runner.min-quality = 1.5\n");
    Path notYaml = Files.writeString(dir.resolve("broken.yml"), "agentscope:\n  training: [\n");
    for (Path config : new Path[] {badValue, notYaml}) {
      ToolRun export = ToolRun.export("--agent", "a", "--format", "sft", "--out", dir.resolve("out").toString(),
          "--config", config.toString());
      for (ToolRun audit : new ToolRun[] {
          ToolRun.audit("session", "s-1", "--config", config.toString()),
          ToolRun.audit("model", "a", "--format", "json", "--config", config.toString()),
          ToolRun.audit("verify", "--config", config.toString())}) {
        assertEquals(2, export.code(), export.err());
        assertEquals(export.code(), audit.code(), config + ": " + audit.err());
        assertTrue(audit.err().startsWith("error: Invalid configuration (1 error):"), audit.err());
        assertTrue(audit.err().contains(config.toString().endsWith(".yml") ? "not valid YAML"
            : "min-quality = 1.5: must be a number in [0, 1]"), audit.err());
        assertEquals("", audit.out(), "nothing on stdout");
      }
    }
    assertFalse(Files.exists(dir.resolve("out")), "nothing written");
  }
}
