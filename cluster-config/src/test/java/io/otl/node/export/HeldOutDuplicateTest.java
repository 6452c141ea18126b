package io.otl.node.export;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.api.DataCollector;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.export.ContinualSettings;
import io.otl.persistence.export.DatasetExport;
import io.otl.persistence.export.ExportFormat;
import io.otl.persistence.export.HeldOut;
import io.otl.persistence.export.JobDatasetExport;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A job's training file leaves out what its held-out sessions say (trial t174): an agent that ran the same
 * conversation twice (a retried task, a scripted check) had one session held out for the bench and the
 * other trained, so the offline gate scored the candidate on an answer it had just been taught. The
 * duplicate is counted as {@code duplicate-of-held-out}; duplicates among training sessions keep their
 * reasons.
 */
class HeldOutDuplicateTest {
  private static final String AGENT = "agent-held";
  private static final double EVAL = 0.3;

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  private static String id(String prefix, boolean heldOut) {
    for (int i = 0; ; i++) {
      if (HeldOut.isHeldOut(prefix + i, EVAL) == heldOut) return prefix + i;
    }
  }

  private static void record(DataCollector dc, String id, String question, String answer) throws Exception {
    get(dc.record(id, AGENT, List.of(
        new SessionInput.Start("start", null, "1.0", "v0", Map.of()),
        new SessionInput.Message("u1", null, "user", question, null, null),
        new SessionInput.Message("a1", null, "assistant", answer, null, null),
        new SessionInput.Feedback("f", null, "THUMBS_UP", null, "fb", "user", null),
        new SessionInput.Result("res", null, "SUCCESS", "r"))));
  }

  @Test
  void aTrainingLineThatSaysWhatAHeldOutSessionSaysIsLeftOut() throws Exception {
    Path dir = TestDatabases.outputDir("held-out-duplicate");
    String held = id("held-", true);
    String same = id("same-", false);
    String near = id("near-", false);
    String other = id("other-", false);
    String twin = id("twin-", false);
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir.resolve("db")), false))) {
      DataCollector dc = node.dataCollector();
      record(dc, held, "Where is order 7?", "It shipped on Monday.");
      record(dc, same, "Where is order 7?", "It shipped on Monday.");
      record(dc, near, "where is ORDER 7", "It shipped on Monday!");
      record(dc, other, "Cancel order 8", "Cancelled.");
      record(dc, twin, "Cancel order 8", "Cancelled.");
      JobDatasetExport jobs = new JobDatasetExport(new DatasetExport(node.system()),
          new ContinualSettings(ContinualSettings.StartFrom.BASE, 0, Duration.ofDays(14), EVAL));
      List<String> pool = List.of(held, same, near, other, twin);

      for (ExportFormat format : List.of(ExportFormat.SFT, ExportFormat.RL)) {
        String jobId = "job-" + format.wireName() + "-" + AGENT;
        JobDatasetExport.Result r = get(jobs.export(AGENT, jobId, pool, format, dir.resolve(format.wireName())));
        assertEquals(List.of(held), r.eval().sessionIds(), format + ": the held-out session is the bench's task");
        assertEquals(List.of(other), r.train().sessionIds(),
            format + ": neither wording of the held-out conversation is trained; the twin is a duplicate");
        assertEquals(Map.of("held-out-for-eval", 1, "duplicate-of-held-out", 2, "duplicate-exact", 1),
            r.train().exclusions(), format.toString());
      }
    }
  }
}
