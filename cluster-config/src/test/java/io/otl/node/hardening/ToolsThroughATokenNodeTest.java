package io.otl.node.hardening;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.AuditCommand;
import io.otl.node.ExportCommand;
import io.otl.node.TrainingNode;
import io.otl.node.readside.FeedTestSupport;
import io.otl.node.testing.TestDatabases;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
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
    Path target = Path.of("target").toAbsolutePath();
    Files.createDirectories(target);
    Path dir = Files.createTempDirectory(target, "token-node-").resolve("data");
    Config db = TestDatabases.h2(dir);
    String journal = "agentscope.training {\n  persistence = h2\n  db.url = \"" + db.getString("agentscope.training.db.url")
        + "\"\n";
    Path withoutToken = Files.writeString(dir.getParent().resolve("no-token.conf"), journal + "}\n");
    Path withToken = Files.writeString(dir.getParent().resolve("token.conf"),
        journal + "  auth.token = \"" + TOKEN + "\"\n}\n");
    Path out = dir.getParent().resolve("out");

    Config protectedNode = ConfigFactory.parseMap(Map.of("agentscope.training.auth.token", TOKEN,
        "agentscope.training.auth.protect-reads", true)).withFallback(TestDatabases.node(db, true));
    try (TrainingNode node = TrainingNode.start(protectedNode)) {
      FeedTestSupport.completedSessions(node.dataCollector(), "tok", "agent-t", 2);

      Run refused = export(Map.of(), "--agent", "agent-t", "--format", "rl", "--out", out.toString(),
          "--config", withoutToken.toString());
      assertEquals(1, refused.code, refused.err);
      assertTrue(refused.err.contains("401") && refused.err.contains("OTL_AUTH_TOKEN"), refused.err);
      assertTrue(!refused.err.contains(TOKEN), refused.err);

      // OTL_AUTH_TOKEN reaches auth.token through reference.conf's ${?OTL_AUTH_TOKEN}, the process
      // environment, which a test cannot set: the same setting given in the --config file.
      Run exported = export(Map.of(), "--agent", "agent-t", "--format", "rl",
          "--out", out.toString(), "--config", withToken.toString());
      assertEquals(0, exported.code, exported.err);
      assertTrue(exported.out.contains("via node"), exported.out);

      Run auditRefused = audit("session", "tok-0", "--config", withoutToken.toString());
      assertEquals(1, auditRefused.code, auditRefused.err);
      assertTrue(auditRefused.err.contains("401") && auditRefused.err.contains("OTL_AUTH_TOKEN"), auditRefused.err);

      Run audited = audit("session", "tok-0", "--config", withToken.toString());
      assertEquals(0, audited.code, audited.err);
      assertTrue(audited.out.contains("tok-0"), audited.out);
    }
  }

  private record Run(int code, String out, String err) {}

  private static Run export(Map<String, String> env, String... args) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    ByteArrayOutputStream e = new ByteArrayOutputStream();
    int code = ExportCommand.run(List.of(args), new PrintStream(o, true, StandardCharsets.UTF_8),
        new PrintStream(e, true, StandardCharsets.UTF_8), env);
    return new Run(code, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
  }

  private static Run audit(String... args) {
    ByteArrayOutputStream o = new ByteArrayOutputStream();
    ByteArrayOutputStream e = new ByteArrayOutputStream();
    int code = AuditCommand.run(List.of(args), new PrintStream(o, true, StandardCharsets.UTF_8),
        new PrintStream(e, true, StandardCharsets.UTF_8));
    return new Run(code, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
  }
}
