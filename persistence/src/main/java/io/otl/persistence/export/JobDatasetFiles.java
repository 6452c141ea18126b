package io.otl.persistence.export;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
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
 *
 * <p>The two files do not share a schema (an SFT or DPO training file, an RL-shaped eval file), and
 * {@code load_dataset(folder, split="train")} builds every split of the folder with one schema, so
 * without more it fails on the other file ("column names don't match"). The folder therefore has a
 * dataset card, {@value #CARD_FILE}, whose {@code configs} give each file a config of its own: the
 * default config {@value #TRAIN_CONFIG} (what {@code name=None} reads) holds only {@value #TRAIN_FILE},
 * the config {@value #EVAL_CONFIG} only {@value #EVAL_FILE}, which the bench config names as its
 * {@code subset_name}.
 */
public final class JobDatasetFiles {
  public static final String TRAIN_FILE = "train.jsonl";
  public static final String EVAL_FILE = "test.jsonl";
  /** The split {@code load_dataset(folder, split=…)} reads {@value #TRAIN_FILE} as. */
  public static final String TRAIN_SPLIT = "train";
  /** The split {@code load_dataset(folder, split=…)} reads {@value #EVAL_FILE} as. */
  public static final String EVAL_SPLIT = "test";
  /** The dataset card that tells {@code datasets} which file each config reads. */
  public static final String CARD_FILE = "README.md";
  /** The card's default config: {@value #TRAIN_FILE} only. */
  public static final String TRAIN_CONFIG = "train";
  /** The card's config of the held-out set, {@value #EVAL_FILE} only (Trinity's {@code subset_name}). */
  public static final String EVAL_CONFIG = "eval";
  private static final String CARD_COMMENT = "---\n"
      + "# Written by the training node: each file of this job's folder is a config of its own, since the\n"
      + "# training rows and the held-out eval tasks have different columns. Each config's description names\n"
      + "# its file's SHA-256: datasets caches a folder with a card by the folder's name and the card, so two\n"
      + "# jobs of one id (two journals) would otherwise read as one.\n"
      + "configs:\n";

  private static String config(String name, boolean isDefault, String sha256, String split, String file) {
    return "- config_name: " + name + "\n"
        + (sha256 == null ? "" : "  description: \"sha256 " + sha256 + "\"\n")
        + (isDefault ? "  default: true\n" : "")
        + "  data_files:\n"
        + "  - split: " + split + "\n"
        + "    path: " + file + "\n";
  }

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

  public static Path card(Path dir, String jobId) {
    return folder(dir, jobId).resolve(CARD_FILE);
  }

  /** The card of a folder with both files, without their hashes (for tests of the rendered configs). */
  public static void writeCard(Path dir, String jobId) throws IOException {
    writeCard(dir, jobId, null, true, null);
  }

  /**
   * Writes the job folder's dataset card (the same bytes for the same files, so a repeated export
   * changes nothing). The {@value #EVAL_CONFIG} config is listed only with a held-out file
   * ({@code evalSha256} not null): a card naming a {@value #EVAL_FILE} that was never written offered a
   * config that {@code datasets} then failed to load ("Unable to find …/test.jsonl"). Each config's
   * {@code description} is its file's SHA-256: {@code datasets} caches a folder that has a card under the
   * folder's name and a hash of the card's config, not of the files, so without it the job
   * {@code job-1-<agent>} of another journal (another dataset directory too) read as the rows cached for
   * the first one (trial t174).
   */
  public static void writeCard(Path dir, String jobId, String trainSha256, String evalSha256) throws IOException {
    writeCard(dir, jobId, trainSha256, evalSha256 != null, evalSha256);
  }

  private static void writeCard(Path dir, String jobId, String trainSha256, boolean withEval, String evalSha256)
      throws IOException {
    writeCardText(dir, jobId, CARD_COMMENT + config(TRAIN_CONFIG, true, trainSha256, TRAIN_SPLIT, TRAIN_FILE)
        + (withEval ? config(EVAL_CONFIG, false, evalSha256, EVAL_SPLIT, EVAL_FILE) : "") + "---\n");
  }

  /**
   * The card of a folder that holds only {@value #EVAL_FILE}: a job whose every session was held out fails its
   * pre-flight with no training rows, and its held-out file (which the job's {@code evalPath} names) stays. It
   * was left without a card, so {@code load_dataset(folder, "eval", split="test")}, how the bench reads a job's
   * held-out set, failed for want of the {@value #EVAL_CONFIG} config. The card lists that config alone, as the
   * default: a card naming {@value #TRAIN_FILE} would offer a config {@code datasets} cannot load.
   */
  public static void writeEvalOnlyCard(Path dir, String jobId, String evalSha256) throws IOException {
    writeCardText(dir, jobId, CARD_COMMENT + config(EVAL_CONFIG, true, evalSha256, EVAL_SPLIT, EVAL_FILE) + "---\n");
  }

  private static void writeCardText(Path dir, String jobId, String text) throws IOException {
    Path card = card(dir, jobId);
    Files.createDirectories(card.getParent());
    Path tmp = card.resolveSibling("." + CARD_FILE + ".tmp");
    Files.writeString(tmp, text, StandardCharsets.UTF_8);
    Files.move(tmp, card, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
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
