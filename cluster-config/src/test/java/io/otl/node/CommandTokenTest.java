package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The token {@code export} and {@code audit} send to the node that holds the journal (trial t34): on
 * a node with named operator tokens only, the command sent none (401), and setting OTL_AUTH_TOKEN to
 * the operator's token beside the node's --config then stopped it (an operator's token equal to
 * auth.token is refused). The one operator token the file resolves is the user's own.
 */
class CommandTokenTest {
  @TempDir
  Path dir;

  private Optional<String> tokenOf(String conf) throws Exception {
    Path file = dir.resolve("node.conf");
    Files.writeString(file, conf);
    return AuditCommand.token(Optional.of(file));
  }

  @Test
  void theSharedTokenFirst() throws Exception {
    assertEquals(Optional.of("sh4red"), tokenOf(
        "agentscope.training.auth { token = \"sh4red\", operators { alice = \"al1ce\" } }"));
  }

  @Test
  void elseTheOneOperatorTokenTheFileResolves() throws Exception {
    assertEquals(Optional.of("al1ce"), tokenOf("agentscope.training.auth.operators { alice = \"al1ce\","
        + " bob = ${?T34_SURELY_UNSET_BOB_TOKEN} }"));
  }

  @Test
  void noneWhenSeveralResolveOrNone() throws Exception {
    assertEquals(Optional.empty(), tokenOf("agentscope.training.auth.operators { alice = \"al1ce\", bob = \"b0b\" }"));
    assertEquals(Optional.empty(), tokenOf("agentscope.training.auth.protect-reads = false"));
  }
}
