package io.otl.node.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.api.DataCollector;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import io.otl.node.testing.PythonVenv;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.export.ContinualSettings;
import io.otl.persistence.export.DatasetExport;
import io.otl.persistence.export.ExportFormat;
import io.otl.persistence.export.JobDatasetExport;
import io.otl.persistence.export.JobDatasetFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Two jobs of one id with other rows (job-1-&lt;agent&gt; of two journals, e.g. a staging node reset against
 * the same Trinity cluster) are two datasets to Hugging Face {@code datasets} (trial t174). It caches a folder
 * that has a dataset card by the folder's name and the card's configs, not by the files: with the card the
 * same for every job, the second job's {@code load_dataset(folder, split="train")} answered the first job's
 * rows (10 for a file of 8), so Trinity would train on another journal's trajectories. The card now names
 * each file's SHA-256 in its config's {@code description}, which {@code datasets} hashes into the cache key.
 */
class JobFolderCacheTest {
  private static final String AGENT = "agent-cache";
  private static final double EVAL = 0.3;

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  private static List<String> ids(String prefix, int n, boolean heldOut) {
    return io.otl.node.testing.HeldOutIds.of(prefix, n, heldOut, EVAL);
  }

  private static void record(DataCollector dc, String id) throws Exception {
    get(dc.record(id, AGENT, List.of(
        new SessionInput.Start("start", null, "1.0", "v0", Map.of()),
        new SessionInput.Message("u1", null, "user", "Question of " + id + "?", null, null),
        new SessionInput.Message("a1", null, "assistant", "Answer for " + id + ".", null, null),
        new SessionInput.Feedback("f", null, "THUMBS_UP", null, "fb", "user", null),
        new SessionInput.Result("res", null, "SUCCESS", "r"))));
  }

  @Test
  void twoJobsOfOneIdInTwoDatasetDirectoriesReadAsTheirOwnRows() throws Exception {
    Path dir = TestDatabases.outputDir("job-folder-cache");
    Path first = dir.resolve("first");
    Path second = dir.resolve("second");
    String jobId = "job-1-" + AGENT;
    List<String> a = new ArrayList<>(ids("a-", 1, true));
    a.addAll(ids("a-", 2, false));
    List<String> b = new ArrayList<>(ids("b-", 2, true));
    b.addAll(ids("b-", 4, false));
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir.resolve("db")), false))) {
      DataCollector dc = node.dataCollector();
      for (String id : a) record(dc, id);
      for (String id : b) record(dc, id);
      JobDatasetExport jobs = new JobDatasetExport(new DatasetExport(node.system()),
          new ContinualSettings(ContinualSettings.StartFrom.BASE, 0, Duration.ofDays(14), EVAL));
      JobDatasetExport.Result one = get(jobs.export(AGENT, jobId, a, ExportFormat.SFT, first));
      JobDatasetExport.Result two = get(jobs.export(AGENT, jobId, b, ExportFormat.SFT, second));
      assertEquals(2, one.train().count());
      assertEquals(4, two.train().count());

      String cardOne = Files.readString(JobDatasetFiles.card(first, jobId));
      String cardTwo = Files.readString(JobDatasetFiles.card(second, jobId));
      assertTrue(cardOne.contains(one.train().sha256()) && cardOne.contains(one.eval().sha256()), cardOne);
      assertNotEquals(cardOne, cardTwo, "two jobs' cards must tell datasets' cache the two apart");
      // A repeated export of the same job writes the same card (the same bytes, as its files).
      get(jobs.export(AGENT, jobId, a, ExportFormat.SFT, first));
      assertEquals(cardOne, Files.readString(JobDatasetFiles.card(first, jobId)));

      // The real reader, in a fresh cache (skipped loudly without Python): each folder reads as its own rows.
      PythonVenv.python();
      Path script = PythonVenv.repoRoot().resolve("cluster-config/src/test/python/hf_dataset_cache_check.py");
      PythonVenv.Result r = PythonVenv.run(script,
          List.of(JobDatasetFiles.folder(first, jobId).toString(), JobDatasetFiles.folder(second, jobId).toString()),
          dir, 600);
      assertEquals(0, r.exitCode(), r.output());
    }
  }
}
