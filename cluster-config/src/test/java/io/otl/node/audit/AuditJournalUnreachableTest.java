package io.otl.node.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.AuditCommand;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code otl-node.jar audit} against a PostgreSQL journal that is not there (wrong port, database
 * down): the operator gets what export prints, the URL and the setting to fix, not the journal pool's
 * {@code IllegalStateException: java.sql.SQLException: … Connection is not available}.
 */
class AuditJournalUnreachableTest {

  @Test
  void anUnreachableJournalIsNamedWithTheSettingToFixAndNoPassword() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    Path config = Files.createTempFile("otl-audit-unreachable-", ".conf");
    Files.writeString(config, "agentscope.training {\n  persistence = postgres\n"
        + "  db.url = \"jdbc:postgresql://127.0.0.1:" + closedPort + "/journal\"\n"
        + "  db.user = \"auditor\"\n  db.password = \"pw-Secret-42\"\n}\n");
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = AuditCommand.run(List.of("session", "s-1", "--config", config.toString()),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
    String e = err.toString(StandardCharsets.UTF_8);
    assertEquals(1, code, e);
    assertTrue(e.startsWith("error: cannot connect to the journal database jdbc:postgresql://127.0.0.1:"
        + closedPort + "/journal"), e);
    assertTrue(e.contains("as user 'auditor'") && e.contains("OTL_DB_URL"), e);
    assertFalse(e.contains("Exception") || e.contains("pw-Secret-42"), e);
    assertEquals("", out.toString(StandardCharsets.UTF_8), "nothing on stdout when nothing was read");
  }
}
