package io.otl.node.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Writes what a finished Trinity run leaves behind, in the layout the real one uses: {@code
 * <jobDir>/global_step_N/actor/huggingface/} with a {@code config.json} and a weights file, plus the
 * evaluation metrics file {@code eval_metrics.json} in {@code global_step_N}. A half-way step
 * without metrics is written too, so readers must pick the highest N. A LoRA run also writes its
 * adapter to {@code actor/lora_adapter/} in PEFT's format, as Trinity-RFT's trainer does.
 */
final class CheckpointWriter {

  /** Metric values of a plausible, modestly good candidate. */
  static final Map<String, Double> DEFAULT_METRICS =
      Map.of("task-success-rate", 0.82, "user-satisfaction", 0.78, "response-latency", 850.0);

  /** Submission metadata {@code metric.<name> = <number>} overrides or adds a metric. */
  static final String METRIC_PREFIX = "metric.";

  private final ObjectMapper mapper;

  CheckpointWriter(ObjectMapper mapper) {
    this.mapper = mapper;
  }

  /** Returns the final {@code global_step_N} directory. */
  Path write(TrinityRunConfig run, Map<String, String> metadata) throws IOException {
    long finalStep = run.finalStep();
    if (finalStep >= 2) {
      writeHuggingface(run, run.jobDir().resolve("global_step_" + finalStep / 2));
    }
    Path stepDir = run.jobDir().resolve("global_step_" + finalStep);
    writeHuggingface(run, stepDir);
    Files.write(stepDir.resolve("eval_metrics.json"), mapper.writerWithDefaultPrettyPrinter().writeValueAsBytes(metrics(metadata)));
    return stepDir;
  }

  static Map<String, Double> metrics(Map<String, String> metadata) {
    Map<String, Double> metrics = new LinkedHashMap<>();
    metrics.put("task-success-rate", DEFAULT_METRICS.get("task-success-rate"));
    metrics.put("user-satisfaction", DEFAULT_METRICS.get("user-satisfaction"));
    metrics.put("response-latency", DEFAULT_METRICS.get("response-latency"));
    metadata.forEach(
        (k, v) -> {
          if (k.startsWith(METRIC_PREFIX)) {
            try {
              metrics.put(k.substring(METRIC_PREFIX.length()), Double.parseDouble(v.trim()));
            } catch (NumberFormatException e) {
              throw new IllegalArgumentException("metadata " + k + " must be a number, was '" + v + "'");
            }
          }
        });
    return metrics;
  }

  private void writeHuggingface(TrinityRunConfig run, Path stepDir) throws IOException {
    Path hf = stepDir.resolve("actor").resolve("huggingface");
    Files.createDirectories(hf);
    ObjectNode config = mapper.createObjectNode();
    config.put("_name_or_path", run.modelPath());
    config.putArray("architectures").add("Qwen2ForCausalLM");
    config.put("model_type", "qwen2");
    config.put("torch_dtype", "bfloat16");
    config.put("trinity_simulator", true);
    config.put("note", "Written by the Trinity simulator: placeholder weights, not a usable model.");
    Files.write(hf.resolve("config.json"), mapper.writerWithDefaultPrettyPrinter().writeValueAsBytes(config));
    Files.write(hf.resolve("model.safetensors"), emptySafetensors());
    if (run.lora()) {
      Path adapter = stepDir.resolve("actor").resolve("lora_adapter");
      Files.createDirectories(adapter);
      ObjectNode peft = mapper.createObjectNode();
      peft.put("peft_type", "LORA");
      peft.put("task_type", "CAUSAL_LM");
      peft.put("base_model_name_or_path", run.modelPath());
      peft.put("r", 16);
      peft.put("lora_alpha", 32);
      peft.put("target_modules", "all-linear");
      peft.put("trinity_simulator", true);
      Files.write(adapter.resolve("adapter_config.json"), mapper.writerWithDefaultPrettyPrinter().writeValueAsBytes(peft));
      Files.write(adapter.resolve("adapter_model.safetensors"), emptySafetensors());
    }
  }

  /** A valid safetensors file holding no tensors, so tools that open it fail softly, not oddly. */
  private byte[] emptySafetensors() throws IOException {
    JsonNode header = mapper.createObjectNode().set("__metadata__", mapper.createObjectNode().put("trinity_simulator", "true"));
    byte[] json = mapper.writeValueAsBytes(header);
    ByteBuffer buf = ByteBuffer.allocate(8 + json.length).order(ByteOrder.LITTLE_ENDIAN);
    buf.putLong(json.length).put(json);
    return buf.array();
  }
}
