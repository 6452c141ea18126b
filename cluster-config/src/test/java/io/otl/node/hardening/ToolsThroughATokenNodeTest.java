package io.otl.node.hardening;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.readside.FeedTestSupport;
import io.otl.node.testing.TestDatabases;
import io.otl.node.testing.ToolRun;
import io.otl.node.testing.ToolsJournal;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A new user ran {@code export} while their node (with {@code auth.token}) held the embedded
 * journal and read "the node answered 401: an Authorization: Bearer <token> header is required":
 * a command sends no header the user could add. The tools take the token from their own
 * configuration, and the error now says so; given the token, the same commands work.
 */
class ToolsThroughATokenNodeTest {
  private static final String TOKEN = "tools-token-1";

  @Test
  void aToolRefusedByTheNodesTokenSaysHowToGiveItTheToken() throws Exception {
    ToolsJournal journal = ToolsJournal.create("token-node");
    Config db = journal.db();
    Path withoutToken = journal.config("no-token.conf");
    Path withToken = journal.config("token.conf", "auth.token = \"" + TOKEN + "\"");
    Path out = journal.out();

    Config protectedNode = ConfigFactory.parseMap(Map.of("agentscope.training.auth.token", TOKEN,
        "agentscope.training.auth.protect-reads", true)).withFallback(TestDatabases.node(db, true));
    try (TrainingNode node = TrainingNode.start(protectedNode)) {
      FeedTestSupport.completedSessions(node.dataCollector(), "tok", "agent-t", 2);

      ToolRun refused = ToolRun.export("--agent", "agent-t", "--format", "rl", "--out", out.toString(),
          "--config", withoutToken.toString());
      assertEquals(1, refused.code(), refused.err());
      assertTrue(refused.err().contains("401") && refused.err().contains("OTL_AUTH_TOKEN"), refused.err());
      assertTrue(!refused.err().contains(TOKEN), refused.err());

      // OTL_AUTH_TOKEN reaches auth.token through reference.conf's ${?OTL_AUTH_TOKEN}, the process
      // environment, which a test cannot set: the same setting given in the --config file.
      ToolRun exported = ToolRun.export("--agent", "agent-t", "--format", "rl",
          "--out", out.toString(), "--config", withToken.toString());
      assertEquals(0, exported.code(), exported.err());
      assertTrue(exported.out().contains("via node"), exported.out());

      ToolRun auditRefused = ToolRun.audit("session", "tok-0", "--config", withoutToken.toString());
      assertEquals(1, auditRefused.code(), auditRefused.err());
      assertTrue(auditRefused.err().contains("401") && auditRefused.err().contains("OTL_AUTH_TOKEN"),
          auditRefused.err());

      ToolRun audited = ToolRun.audit("session", "tok-0", "--config", withToken.toString());
      assertEquals(0, audited.code(), audited.err());
      assertTrue(audited.out().contains("tok-0"), audited.out());
    }
  }
}
