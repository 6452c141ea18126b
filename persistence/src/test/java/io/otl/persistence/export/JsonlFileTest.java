package io.otl.persistence.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job's data folder is read by {@code datasets.load_dataset(folder, split=…)}, which takes every
 * file whose name starts with the split ({@code train.jsonl.tmp} too) but skips dot files: while a
 * file is written, and after a crash mid-write, the folder holds no visible partial file.
 */
class JsonlFileTest {

  private static List<String> names(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void thePartialFileIsHiddenInTheJobsFolderUntilCommitted(@TempDir Path dir) throws Exception {
    Path target = JobDatasetFiles.trainFile(dir, "job-1");
    JsonlFile out = new JsonlFile(target);
    out.write("{\"prompt\":\"hi\"}", List.of("s1"));
    List<String> whileWriting = names(target.getParent());
    assertTrue(whileWriting.stream().allMatch(n -> n.startsWith(".")), "visible while writing: " + whileWriting);

    out.commit();
    assertEquals(List.of("train.jsonl"), names(target.getParent()));
    assertEquals(List.of("{\"prompt\":\"hi\"}"), Files.readAllLines(target));
  }
}
