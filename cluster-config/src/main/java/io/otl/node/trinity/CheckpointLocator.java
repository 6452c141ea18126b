package io.otl.node.trinity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.model.EvalEvidence;
import io.otl.core.training.OutputModel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Finds the model a finished Trinity run produced.
 *
 * <p>Layout (Trinity-RFT with {@code save_hf_checkpoint}): {@code
 * <checkpoint_root_dir>/<project>/<name>/global_step_N/actor/huggingface/}; the highest N that has
 * a model wins. A LoRA run (the model's {@code lora_configs}) writes its adapter to {@code
 * actor/lora_adapter/} ({@code adapter_config.json} and {@code adapter_model.safetensors}), beside a
 * {@code huggingface} folder that then holds only the config and tokenizer: the adapter is the model
 * (what vLLM loads and the next job trains on).
 *
 * <p>Evaluation metrics: the run (its evaluation step, or the simulator) writes {@value
 * #EVAL_METRICS_FILE} into that {@code global_step_N} folder, a flat JSON object of metric name to
 * number, with the names of {@code model-update.evaluation-metrics}, e.g. {@code
 * {"task-success-rate":0.82,"user-satisfaction":0.74,"response-latency":850.0}} (rates in 0..1,
 * latency as p95 in milliseconds). A missing file means no metrics; non-numeric values are skipped.
 * Real Trinity does not write it: it is read only for jobs submitted without a bench step (by
 * earlier builds).
 *
 * <p>Bench evidence (issue #16): a job with a bench step ({@link BenchConfig}) is judged on
 * {@value #BENCH_SCORES_FILE} in the job folder only, {@code {"evalSha256":…, "evalCount":n,
 * "candidateModel":…, "stableModel":…, "candidate":{metric:number…}, "stable":{metric:number…}}}:
 * the candidate's scores become the metrics, the stable's scores of the same run travel as {@code
 * bench-stable.<metric>} and the eval set size as {@code bench-eval-count} ({@link
 * io.otl.core.model.EvalEvidence}), so the gate compares the two scores of one run.
 */
public final class CheckpointLocator {

  public static final String EVAL_METRICS_FILE = "eval_metrics.json";
  public static final String BENCH_SCORES_FILE = "bench_scores.json";

  /** Where a job's evaluation evidence comes from, decided at submission. */
  public enum Evidence {
    /** Submitted before bench steps existed: the step's eval_metrics.json. */
    LEGACY,
    /** A bench step ran after training: bench_scores.json only. */
    BENCH,
    /** No bench step: the held-out eval set was empty, so there is nothing to score. */
    EMPTY_EVAL_SET
  }

  private static final Pattern STEP_DIR = Pattern.compile("global_step_(\\d+)");

  private final ObjectMapper mapper;

  public CheckpointLocator(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  /** Empty when the job directory holds no Hugging Face checkpoint (yet). Blocking file IO. */
  public Optional<OutputModel> locate(Path jobDir) throws IOException {
    return locate(jobDir, Evidence.LEGACY);
  }

  /** As {@link #locate(Path)}, with the metrics taken from where {@code evidence} says. */
  public Optional<OutputModel> locate(Path jobDir, Evidence evidence) throws IOException {
    if (!Files.isDirectory(jobDir)) {
      return Optional.empty();
    }
    Optional<Path> latest;
    try (Stream<Path> children = Files.list(jobDir)) {
      latest =
          children
              .filter(p -> STEP_DIR.matcher(p.getFileName().toString()).matches())
              .filter(p -> Files.isDirectory(modelOf(p)))
              .max(Comparator.comparingLong(CheckpointLocator::stepOf));
    }
    if (latest.isEmpty()) {
      return Optional.empty();
    }
    Path stepDir = latest.get();
    return Optional.of(
        new OutputModel(modelOf(stepDir).toAbsolutePath().toUri().toString(), switch (evidence) {
          case LEGACY -> readMetrics(stepDir);
          case BENCH -> readBench(jobDir);
          case EMPTY_EVAL_SET -> Map.of(EvalEvidence.EVAL_COUNT, 0.0);
        }));
  }

  private Map<String, Double> readBench(Path jobDir) throws IOException {
    Path file = jobDir.resolve(BENCH_SCORES_FILE);
    Map<String, Double> metrics = new LinkedHashMap<>();
    if (!Files.isRegularFile(file)) {
      return metrics;
    }
    JsonNode node = mapper.readTree(file.toFile());
    if (node == null || !node.isObject()) {
      return metrics;
    }
    numbers(node.path("candidate"), "", metrics);
    numbers(node.path("stable"), EvalEvidence.BASELINE_PREFIX, metrics);
    if (node.path("evalCount").isNumber()) {
      metrics.put(EvalEvidence.EVAL_COUNT, node.path("evalCount").doubleValue());
    }
    return metrics;
  }

  private static void numbers(JsonNode object, String prefix, Map<String, Double> into) {
    if (object.isObject()) {
      object.fields().forEachRemaining(e -> {
        if (e.getValue().isNumber()) into.put(prefix + e.getKey(), e.getValue().doubleValue());
      });
    }
  }

  private Map<String, Double> readMetrics(Path stepDir) throws IOException {
    Path file = stepDir.resolve(EVAL_METRICS_FILE);
    Map<String, Double> metrics = new LinkedHashMap<>();
    if (!Files.isRegularFile(file)) {
      return metrics;
    }
    JsonNode node = mapper.readTree(file.toFile());
    if (node != null && node.isObject()) {
      node.fields()
          .forEachRemaining(
              e -> {
                if (e.getValue().isNumber()) {
                  metrics.put(e.getKey(), e.getValue().doubleValue());
                }
              });
    }
    return metrics;
  }

  static Path huggingface(Path stepDir) {
    return stepDir.resolve("actor").resolve("huggingface");
  }

  /** A step's model: its LoRA adapter when it has one, else its Hugging Face folder. */
  public static Path modelOf(Path stepDir) {
    Path adapter = stepDir.resolve("actor").resolve("lora_adapter");
    return Files.isRegularFile(adapter.resolve("adapter_config.json")) ? adapter : huggingface(stepDir);
  }

  static long stepOf(Path stepDir) {
    Matcher m = STEP_DIR.matcher(stepDir.getFileName().toString());
    return m.matches() ? Long.parseLong(m.group(1)) : -1;
  }
}
