package io.otl.node.embedded;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.api.DataCollector;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import io.otl.node.testing.LogCapture;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Closing an embedded node right after sessions completed logs no warning: the trajectory feed was
 * still delivering to the coordinators when the sharding regions stopped, and its stream logged a
 * restart with a stack trace ("shard region had already been terminated") on an ordinary close
 * (trial t36). The node's shutdown now stops the feeds first, storing their offsets.
 */
class QuietCloseTest {
  @Test
  void closingRightAfterSessionsCompletedLogsNoWarning(@TempDir Path dir) throws Exception {
    List<String> warnings;
    try (LogCapture logged = LogCapture.everything()) {
      int beforeClose;
      try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir), false))) {
        DataCollector dc = node.dataCollector();
        List<CompletableFuture<?>> acks = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
          acks.add(dc.record("quiet-" + i, "quiet-agent",
              new SessionInput.Message("u", null, "user", "question " + i, null, null),
              new SessionInput.Message("a", null, "assistant", "answer " + i, "r-" + i, null),
              new SessionInput.Feedback("f", null, "THUMBS_UP", null, "fb-" + i, "api"),
              new SessionInput.Result("end", null, "SUCCESS", null)).toCompletableFuture());
        }
        CompletableFuture.allOf(acks.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        beforeClose = logged.lines().size();
      }
      warnings = logged.lines().stream().skip(beforeClose).filter(l -> l.startsWith("WARN ") || l.startsWith("ERROR ")).toList();
    }
    assertTrue(warnings.isEmpty(), "a close after completed sessions logged: " + warnings);
    // and the trajectories were not lost by stopping the feed: a restarted node delivers them
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir), false))) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      int pool = -1;
      while (System.nanoTime() < deadline) {
        pool = node.trainingCoordinators().status("quiet-agent").toCompletableFuture().get(30, TimeUnit.SECONDS)
            .map(v -> v.poolSize()).orElse(0);
        if (pool == 40) break;
        Thread.sleep(200);
      }
      assertEquals(40, pool, "every completed trajectory reached the coordinator");
    }
  }
}
