package io.otl.node.trinity;

import io.otl.core.model.Metric;
import io.otl.core.training.TrainingJobSpec;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The step that turns real Trinity bench output into {@value CheckpointLocator#BENCH_SCORES_FILE}
 * (issue #16 item 3). Trinity's bench logs its scores only through its monitor: with {@code
 * monitor_type: tensorboard} ({@link BenchConfig}) as tensorboard scalars {@code
 * bench/<taskset>/<metric>} under {@code <checkpoint_job_dir>/monitor/tensorboard/}, step 0 for
 * {@code model.model_path} (the stable) and step N for {@code global_step_N}. The converter {@value
 * #SCRIPT_RESOURCE} (a Python script shipped in this jar, written next to the job's configs as
 * {@code <jobId>.bench_scores.py}) is chained after the bench and maps Trinity's metric names to
 * ours.
 *
 * <p>The mapping is the hyperparameter {@value #HYPERPARAM}: {@code "<our metric>=<Trinity
 * metric>[, …]"}, where the Trinity metric is a key of the bench reward function's result (e.g.
 * {@code accuracy} of {@code accuracy_reward}); default {@value #DEFAULT_MAPPING}.
 */
public final class BenchScores {
  /** The hyperparameter naming which Trinity bench metric scores which of our metrics. */
  public static final String HYPERPARAM = "bench-metrics";
  public static final String DEFAULT_MAPPING = "task-success-rate=accuracy";
  static final String SCRIPT_RESOURCE = "bench_scores.py";
  static final String SCRIPT_SUFFIX = ".bench_scores.py";
  /** Ray runs the entrypoint in a shell on the head node, where Trinity (and so tensorboard) is installed. */
  static final String PYTHON = "python3";
  private static final Pattern TRINITY_METRIC = Pattern.compile("[A-Za-z0-9_.@/-]+");

  private BenchScores() {}

  /** The script's text, as shipped in this jar. */
  static String script() {
    try (InputStream in = BenchScores.class.getResourceAsStream(SCRIPT_RESOURCE)) {
      if (in == null) throw new IllegalStateException(SCRIPT_RESOURCE + " missing from the classpath");
      return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** {@code <jobId>.bench_scores.py} beside the bench config. */
  public static Path scriptPath(TrainingJobSpec spec) {
    return TrinityConfigRenderer.configPath(spec).resolveSibling(spec.jobId() + SCRIPT_SUFFIX);
  }

  /** The converter's command line, words unquoted (see {@link RayJobsBackend#shellQuote}). */
  public static List<String> command(TrainingJobSpec spec, Path script) {
    List<String> words = new ArrayList<>(List.of(PYTHON, script.toString(),
        "--job-dir", TrinityConfigRenderer.checkpointJobDir(spec).toString(),
        "--taskset", BenchConfig.tasksetName(spec),
        "--eval-file", TrinityConfigRenderer.evalPath(spec).toString(),
        "--stable-model", TrinityConfigRenderer.modelPath(spec.startModel())));
    mapping(spec.hyperparams()).forEach((ours, theirs) -> {
      words.add("--metric");
      words.add(ours + "=" + theirs);
    });
    return words;
  }

  /**
   * Our metric → Trinity bench metric, from the hyperparameter (names match ignoring case, '-' and
   * '_'). Throws naming the hyperparameter and what is allowed when a pair is malformed, an our
   * metric is not an evaluation metric or a Trinity name has characters a metric tag cannot have.
   */
  public static Map<String, String> mapping(Map<String, Object> hyperparams) {
    Object value = null;
    for (Map.Entry<String, Object> e : hyperparams.entrySet()) {
      if (e.getKey().replace("-", "").replace("_", "").toLowerCase(Locale.ROOT).equals("benchmetrics")) {
        value = e.getValue();
      }
    }
    String text = value == null || value.toString().isBlank() ? DEFAULT_MAPPING : value.toString();
    Map<String, String> out = new LinkedHashMap<>();
    for (String pair : text.split(",")) {
      String[] kv = pair.split("=", -1);
      String allowed = "a comma-separated list of <metric>=<Trinity bench metric>, metric one of "
          + Metric.allowedKeys() + ", e.g. \"" + DEFAULT_MAPPING + "\"";
      if (kv.length != 2 || kv[0].isBlank() || kv[1].isBlank()) {
        throw new IllegalArgumentException("hyperparameter " + HYPERPARAM + " = \"" + text + "\": must be " + allowed);
      }
      Metric m;
      try {
        m = Metric.fromKey(kv[0].strip());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException("hyperparameter " + HYPERPARAM + ": '" + kv[0].strip()
            + "' is not an evaluation metric; must be " + allowed, e);
      }
      if (m.guardrail()) {
        throw new IllegalArgumentException("hyperparameter " + HYPERPARAM + ": '" + m.key()
            + "' is a guardrail, not scored offline; must be " + allowed);
      }
      if (!TRINITY_METRIC.matcher(kv[1].strip()).matches()) {
        throw new IllegalArgumentException("hyperparameter " + HYPERPARAM + ": '" + kv[1].strip()
            + "' is not a Trinity metric name (letters, digits, _ . @ / -)");
      }
      out.put(m.key(), kv[1].strip());
    }
    return out;
  }
}
