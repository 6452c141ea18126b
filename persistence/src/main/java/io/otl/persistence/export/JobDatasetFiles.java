package io.otl.persistence.export;

import java.nio.file.Path;
import java.util.Optional;

/**
 * Where a training job's dataset lives under the dataset directory.
 *
 * <p>Trinity-RFT's file reader calls {@code datasets.load_dataset(path, split=...)}, and Hugging
 * Face {@code datasets} loads a folder, not a single data file, mapping file names to splits
 * ({@code train*} → train, {@code test*}/{@code eval*} → test). So each job's rows get a folder of
 * their own, {@code <dir>/<jobId>/}, holding only {@value #TRAIN_FILE} and the held-out
 * {@value #EVAL_FILE}; the manifests (and the node's YAML configs) stay beside it in {@code <dir>},
 * where they cannot be read as rows. Jobs exported by earlier builds recorded
 * {@code <dir>/<jobId>.jsonl}: {@link #folderOf} tells the two apart.
 */
public final class JobDatasetFiles {
  public static final String TRAIN_FILE = "train.jsonl";
  public static final String EVAL_FILE = "test.jsonl";
  /** The split {@code load_dataset(folder, split=…)} reads {@value #TRAIN_FILE} as. */
  public static final String TRAIN_SPLIT = "train";
  /** The split {@code load_dataset(folder, split=…)} reads {@value #EVAL_FILE} as. */
  public static final String EVAL_SPLIT = "test";

  private JobDatasetFiles() {}

  public static Path folder(Path dir, String jobId) {
    return dir.resolve(jobId);
  }

  public static Path trainFile(Path dir, String jobId) {
    return folder(dir, jobId).resolve(TRAIN_FILE);
  }

  public static Path evalFile(Path dir, String jobId) {
    return folder(dir, jobId).resolve(EVAL_FILE);
  }

  public static Path trainManifest(Path dir, String jobId) {
    return dir.resolve(jobId + ".manifest.json");
  }

  public static Path evalManifest(Path dir, String jobId) {
    return dir.resolve(jobId + ".eval.manifest.json");
  }

  /**
   * The job's data folder when {@code datasetPath} (the path a job recorded) is this layout's
   * training file; empty for a path of an earlier build ({@code <dir>/<jobId>.jsonl}) or any other.
   */
  public static Optional<Path> folderOf(Path datasetPath, String jobId) {
    Path folder = datasetPath.getParent();
    boolean ours = datasetPath.getFileName() != null && datasetPath.getFileName().toString().equals(TRAIN_FILE)
        && folder != null && folder.getFileName() != null && folder.getFileName().toString().equals(jobId);
    return ours ? Optional.of(folder) : Optional.empty();
  }
}
