package io.otl.node.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import io.otl.node.testing.ToolRun;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code audit … --as-of} takes the times {@code export --since/--until} take. An operator who had just
 * exported with {@code --since 2026-11-20} got "not an ISO-8601 time" and exit 2 for {@code --as-of
 * 2026-11-20}, though a date is ISO-8601 and the usage asked for nothing more.
 */
class AuditAsOfDateTest {

  @Test
  void aDateMeansItsStartInUtcAsForExport(@TempDir Path dir) throws Exception {
    Config h2 = TestDatabases.h2(dir.resolve("data"));
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(h2, false))) {
      node.dataCollector().record("s-1", "agent-a",
              new SessionInput.Message("e1", null, "user", "hi", null, null),
              new SessionInput.Result("e2", null, "SUCCESS", null))
          .toCompletableFuture().get(60, TimeUnit.SECONDS);
    }
    Path config = TestDatabases.toolsConfig(h2, dir.resolve("node.conf"));
    String tomorrow = LocalDate.now(ZoneOffset.UTC).plusDays(1).toString();

    ToolRun after = ToolRun.audit("session", "s-1", "--as-of", tomorrow, "--config", config.toString());
    assertEquals(0, after.code(), after.err());
    assertTrue(after.out().contains("state as of " + tomorrow + "T00:00:00Z:"), after.out());
    assertTrue(after.out().contains("\"status\" : \"COMPLETED\""), after.out());

    ToolRun before = ToolRun.audit("session", "s-1", "--as-of", "2000-01-01", "--config", config.toString());
    assertEquals(1, before.code(), before.err());
    assertTrue(before.err().contains("did not exist at 2000-01-01T00:00:00Z"), before.err());

    ToolRun offset = ToolRun.audit("session", "s-1", "--as-of", "2000-01-01T08:00:00+08:00", "--config",
        config.toString());
    assertTrue(offset.err().contains("did not exist at 2000-01-01T00:00:00Z"), offset.err());

    ToolRun noon = ToolRun.audit("session", "s-1", "--as-of", "noon", "--config", config.toString());
    assertEquals(2, noon.code(), noon.err());
    assertTrue(noon.err().startsWith("error: --as-of noon is not an ISO-8601 time; use e.g. 2026-11-01T00:00:00Z"),
        noon.err());

    // Two times: the last one was used without a word, an audit of another moment than the one meant.
    ToolRun twice = ToolRun.audit("session", "s-1", "--as-of", "2000-01-01", "--config", config.toString(),
        "--as-of", tomorrow);
    assertEquals(2, twice.code(), twice.out() + twice.err());
    assertTrue(twice.err().startsWith("error: --as-of is given twice; give it once"), twice.err());
  }
}
