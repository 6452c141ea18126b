package io.otl.node.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.otl.node.trinity.CheckpointLocator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The simulator's {@code trinity run --config <bench.yaml>} ({@code mode: bench}) chained after
 * training, standing in for the bench and the converter that real runs chain after it: it "evaluates" the run's latest checkpoint (the candidate) and {@code model.model_path}
 * (the stable or base the job started from) on the eval taskset and writes {@code
 * bench_scores.json} into the run's folder. Deterministic: a checkpoint's score is its quality (the
 * {@code eval_metrics.json} its training wrote, which test hooks can set), a model that is not a
 * simulator checkpoint scores {@link CheckpointWriter#DEFAULT_METRICS}; the eval file's size and
 * SHA-256 are recorded, and an empty eval set scores nothing.
 */
final class BenchStep {
  static final String SCORES_FILE = "bench_scores.json";
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  record BenchRun(Path configFile, Path jobDir, String stableModel, Path evalFile, List<String> converter) {}

  private final ObjectMapper mapper;

  BenchStep(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  /** The bench config chained in {@code entrypoint} ({@code ... && trinity run --config <bench>}). */
  static Optional<BenchRun> parse(String entrypoint, Path workDir) throws IOException {
    List<String> words = TrinityRunConfig.shellWords(entrypoint);
    int and = words.indexOf("&&");
    if (and < 0) return Optional.empty();
    List<String> rest = words.subList(and + 1, words.size());
    int config = rest.indexOf("--config");
    if (rest.size() < 4 || !rest.get(0).equals("trinity") || !rest.get(1).equals("run") || config < 0
        || config + 1 >= rest.size()) {
      throw new IOException("the simulator only chains 'trinity run --config <file>', entrypoint was: " + entrypoint);
    }
    Path file = workDir.resolve(rest.get(config + 1)).toAbsolutePath();
    if (!Files.isRegularFile(file)) {
      throw new IOException("FileNotFoundError: config file " + file + " does not exist");
    }
    // Real Trinity's bench leaves its scores in tensorboard files, and a converter script chained
    // after it writes bench_scores.json; the simulator writes that file itself, so it only checks
    // the converter would start (python3 <existing script>), as the shell would.
    int next = rest.indexOf("&&");
    List<String> converter = next < 0 ? List.of() : List.copyOf(rest.subList(next + 1, rest.size()));
    if (next >= 0) {
      if (converter.size() < 2 || !converter.get(0).equals("python3")) {
        throw new IOException("the simulator only chains 'python3 <script>' after the bench, entrypoint was: "
            + entrypoint);
      }
      Path script = workDir.resolve(converter.get(1)).toAbsolutePath();
      if (!Files.isRegularFile(script)) {
        throw new IOException("python3: can't open file '" + script + "': [Errno 2] No such file or directory");
      }
    }
    JsonNode yaml = YAML.readTree(file.toFile());
    if (yaml == null || !"bench".equals(yaml.path("mode").asText())) {
      throw new IOException("config " + file + " chained after training is not mode: bench");
    }
    JsonNode eval = yaml.path("buffer").path("explorer_input").path("eval_tasksets").path(0);
    if (!eval.path("path").isTextual()) {
      throw new IOException("config " + file + " has no buffer.explorer_input.eval_tasksets[0].path");
    }
    Path jobDir = workDir.resolve(yaml.path("checkpoint_root_dir").asText()).resolve(yaml.path("project").asText())
        .resolve(yaml.path("name").asText()).toAbsolutePath().normalize();
    return Optional.of(new BenchRun(file, jobDir, yaml.path("model").path("model_path").asText(""),
        evalFile(workDir.resolve(eval.path("path").asText()).toAbsolutePath(), eval.path("split").asText("train")),
        converter));
  }

  /**
   * The file Trinity's {@code load_dataset(path, split=…)} reads the taskset from: in a data folder,
   * the one named after the split (the exporter writes {@code train.jsonl} and {@code test.jsonl});
   * a single file (a job of an earlier build) is itself.
   */
  static Path evalFile(Path path, String split) {
    return Files.isDirectory(path) ? path.resolve(split + ".jsonl") : path;
  }

  /** Scores candidate ({@code candidateStep}) and stable; returns the scores file. */
  Path run(BenchRun bench, Path candidateStep) throws IOException {
    if (!Files.isRegularFile(bench.evalFile())) {
      throw new IOException("FileNotFoundError: eval taskset " + bench.evalFile() + " does not exist");
    }
    byte[] bytes = Files.readAllBytes(bench.evalFile());
    long count = Files.readAllLines(bench.evalFile()).stream().filter(l -> !l.isBlank()).count();
    ObjectNode out = mapper.createObjectNode();
    out.put("evalPath", bench.evalFile().toString());
    out.put("evalSha256", sha256(bytes));
    out.put("evalCount", count);
    out.put("candidateModel", CheckpointLocator.modelOf(candidateStep).toString());
    out.put("stableModel", bench.stableModel());
    if (count > 0) {
      out.set("candidate", mapper.valueToTree(qualityOfStep(candidateStep)));
      out.set("stable", mapper.valueToTree(qualityOf(bench.stableModel())));
    }
    Path file = bench.jobDir().resolve(SCORES_FILE);
    Files.write(file, mapper.writerWithDefaultPrettyPrinter().writeValueAsBytes(out));
    return file;
  }

  /** A simulator checkpoint ({@code …/global_step_N/actor/huggingface} or {@code lora_adapter}) scores what it was trained to. */
  private Map<String, Double> qualityOf(String model) throws IOException {
    Path hf;
    try {
      hf = model.startsWith("file:") ? Path.of(java.net.URI.create(model)) : Path.of(model);
    } catch (RuntimeException e) {
      return CheckpointWriter.metrics(Map.of());
    }
    Path step = hf.getParent() == null ? null : hf.getParent().getParent();
    return step == null ? CheckpointWriter.metrics(Map.of()) : qualityOfStep(step);
  }

  private Map<String, Double> qualityOfStep(Path step) throws IOException {
    Path metrics = step.resolve("eval_metrics.json");
    Map<String, Double> q = CheckpointWriter.metrics(Map.of());
    if (Files.isRegularFile(metrics)) {
      mapper.readTree(metrics.toFile()).fields().forEachRemaining(e -> {
        if (e.getValue().isNumber()) q.put(e.getKey(), e.getValue().doubleValue());
      });
    }
    return q;
  }

  private static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
