package io.otl.node.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.api.DataCollector;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.export.ContinualSettings;
import io.otl.persistence.export.DatasetExport;
import io.otl.persistence.export.ExportFormat;
import io.otl.persistence.export.JobDatasetExport;
import io.otl.persistence.export.JobDatasetFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A job whose every session falls in the held-out set has no training rows (it fails its pre-flight, "every
 * trajectory fell into the held-out evaluation set"), and its {@code test.jsonl} stays, named by the job's
 * {@code evalPath}. That file was left without a dataset card, where every job folder's files carry one
 * (docs/datasets.md), so {@code load_dataset(folder, "eval", split="test")} found no {@code eval} config. The
 * folder now has a card listing the eval config alone (the default then), and no train config for a file that
 * is not there.
 */
class EvalOnlyJobFolderTest {
  private static final String AGENT = "agent-eval-only";
  private static final double EVAL = 0.3;

  @Test
  void aJobWithOnlyHeldOutSessionsLeavesItsEvalFileWithACardOfItsOwn() throws Exception {
    Path dir = TestDatabases.outputDir("eval-only-job-folder");
    Path datasets = dir.resolve("datasets");
    String jobId = "job-1-" + AGENT;
    List<String> heldOut = io.otl.node.testing.HeldOutIds.of("h-", 2, true, EVAL);
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir.resolve("db")), false))) {
      DataCollector dc = node.dataCollector();
      for (String id : heldOut) {
        dc.record(id, AGENT, List.of(
            new SessionInput.Start("start", null, "1.0", "v0", Map.of()),
            new SessionInput.Message("u1", null, "user", "Question of " + id + "?", null, null),
            new SessionInput.Message("a1", null, "assistant", "Answer for " + id + ".", null, null),
            new SessionInput.Feedback("f", null, "THUMBS_UP", null, "fb", "user", null),
            new SessionInput.Result("res", null, "SUCCESS", "r"))).toCompletableFuture().get(60, TimeUnit.SECONDS);
      }
      JobDatasetExport jobs = new JobDatasetExport(new DatasetExport(node.system()),
          new ContinualSettings(ContinualSettings.StartFrom.BASE, 0, Duration.ofDays(14), EVAL));
      JobDatasetExport.Result r = jobs.export(AGENT, jobId, heldOut, ExportFormat.SFT, datasets)
          .toCompletableFuture().get(60, TimeUnit.SECONDS);
      assertEquals(0, r.train().count(), "no training rows");
      assertEquals(2, r.eval().count());

      assertTrue(Files.isRegularFile(JobDatasetFiles.evalFile(datasets, jobId)), "the held-out file stays");
      assertFalse(Files.exists(JobDatasetFiles.trainFile(datasets, jobId)));
      Path card = JobDatasetFiles.card(datasets, jobId);
      assertTrue(Files.isRegularFile(card), "the held-out file carries a card");
      String text = Files.readString(card);
      assertTrue(text.contains("- config_name: eval\n  description: \"sha256 " + r.eval().sha256() + "\"\n"
          + "  default: true\n  data_files:\n  - split: test\n    path: test.jsonl\n"), text);
      assertFalse(text.contains("config_name: train") || text.contains("train.jsonl"),
          "no config for a training file that is not there: " + text);
    }
  }
}
