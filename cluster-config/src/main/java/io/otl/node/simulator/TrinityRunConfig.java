package io.otl.node.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * What the simulator needs from a {@code trinity run --config <file>} entrypoint: where the run's
 * checkpoints go ({@code <checkpoint_root_dir>/<project>[/<group>]/<name>}), the model and how many
 * steps it trains, and whether it trains a LoRA adapter ({@code model.lora_configs}).
 */
record TrinityRunConfig(Path configFile, Path jobDir, String modelPath, long finalStep, boolean lora) {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  /** Parses the entrypoint and the YAML it names; the message of the exception is the job's error. */
  static TrinityRunConfig fromEntrypoint(String entrypoint, Path workDir) throws IOException {
    List<String> args = shellWords(entrypoint);
    int config = args.indexOf("--config");
    if (args.size() < 4 || !args.get(0).equals("trinity") || !args.get(1).equals("run") || config < 0
        || config + 1 >= args.size()) {
      throw new IOException(
          "the simulator only runs 'trinity run --config <file>', entrypoint was: " + entrypoint);
    }
    Path file = workDir.resolve(args.get(config + 1)).toAbsolutePath();
    if (!Files.isRegularFile(file)) {
      throw new IOException("FileNotFoundError: config file " + file + " does not exist");
    }
    JsonNode yaml = YAML.readTree(file.toFile());
    if (yaml == null || !yaml.isObject()) {
      throw new IOException("config " + file + " is not a YAML mapping");
    }
    String root = text(yaml, "checkpoint_root_dir", file);
    String project = text(yaml, "project", file);
    String name = text(yaml, "name", file);
    Path jobDir = workDir.resolve(root).resolve(project);
    String group = yaml.path("group").asText("");
    if (!group.isBlank()) {
      jobDir = jobDir.resolve(group);
    }
    jobDir = jobDir.resolve(name).toAbsolutePath().normalize();
    String model = yaml.path("model").path("model_path").asText("unknown-model");
    long steps = yaml.path("trainer").path("total_steps").asLong(yaml.path("buffer").path("total_steps").asLong(0));
    if (steps <= 0) {
      steps = Math.max(1, yaml.path("buffer").path("total_epochs").asLong(1)) * 10;
    }
    boolean lora = yaml.path("model").path("lora_configs").size() > 0;
    return new TrinityRunConfig(file, jobDir, model, steps, lora);
  }

  private static String text(JsonNode yaml, String key, Path file) throws IOException {
    String v = yaml.path(key).asText("");
    if (v.isBlank()) {
      throw new IOException("config " + file + " has no '" + key + "'");
    }
    return v;
  }

  /** Splits like a POSIX shell does for the simple cases: whitespace, single and double quotes. */
  static List<String> shellWords(String line) {
    List<String> words = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    boolean inWord = false;
    char quote = 0;
    for (int i = 0; i < line.length(); i++) {
      char ch = line.charAt(i);
      if (quote != 0) {
        if (ch == quote) {
          quote = 0;
        } else {
          cur.append(ch);
        }
      } else if (ch == '\'' || ch == '"') {
        quote = ch;
        inWord = true;
      } else if (ch == '\\' && i + 1 < line.length()) {
        cur.append(line.charAt(++i));
        inWord = true;
      } else if (Character.isWhitespace(ch)) {
        if (inWord) {
          words.add(cur.toString());
          cur.setLength(0);
          inWord = false;
        }
      } else {
        cur.append(ch);
        inWord = true;
      }
    }
    if (inWord) {
      words.add(cur.toString());
    }
    return words;
  }
}
