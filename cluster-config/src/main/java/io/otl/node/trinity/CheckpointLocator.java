package io.otl.node.trinity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
 * a {@code huggingface} folder wins.
 *
 * <p>Evaluation metrics: the run (its evaluation step, or the simulator) writes {@value
 * #EVAL_METRICS_FILE} into that {@code global_step_N} folder, a flat JSON object of metric name to
 * number, with the names of {@code model-update.evaluation-metrics}, e.g. {@code
 * {"task-success-rate":0.82,"user-satisfaction":0.74,"response-latency":850.0}} (rates in 0..1,
 * latency as p95 in milliseconds). A missing file means no metrics; non-numeric values are skipped.
 */
public final class CheckpointLocator {

  public static final String EVAL_METRICS_FILE = "eval_metrics.json";

  private static final Pattern STEP_DIR = Pattern.compile("global_step_(\\d+)");

  private final ObjectMapper mapper;

  public CheckpointLocator(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  /** Empty when the job directory holds no Hugging Face checkpoint (yet). Blocking file IO. */
  public Optional<OutputModel> locate(Path jobDir) throws IOException {
    if (!Files.isDirectory(jobDir)) {
      return Optional.empty();
    }
    Optional<Path> latest;
    try (Stream<Path> children = Files.list(jobDir)) {
      latest =
          children
              .filter(p -> STEP_DIR.matcher(p.getFileName().toString()).matches())
              .filter(p -> Files.isDirectory(huggingface(p)))
              .max(Comparator.comparingLong(CheckpointLocator::stepOf));
    }
    if (latest.isEmpty()) {
      return Optional.empty();
    }
    Path stepDir = latest.get();
    return Optional.of(
        new OutputModel(huggingface(stepDir).toAbsolutePath().toUri().toString(), readMetrics(stepDir)));
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

  static long stepOf(Path stepDir) {
    Matcher m = STEP_DIR.matcher(stepDir.getFileName().toString());
    return m.matches() ? Long.parseLong(m.group(1)) : -1;
  }
}
