package io.otl.core.model;

import io.otl.core.Ids;
import io.otl.core.model.ModelProtocol.RecordOutcome;
import java.util.Map;
import java.util.Optional;

/**
 * Input rules of {@link ModelVersion}'s commands. The HTTP edge validates too; the domain refuses
 * what is invalid regardless (a command may come from a job or another node, not only HTTP). Each
 * rule returns the problem in words, empty when the input is valid.
 */
final class ModelValidation {

  private ModelValidation() {}

  static Optional<String> registration(String version, String artifact, String endpoint) {
    String versionProblem = Ids.versionProblem("version", version);
    if (versionProblem != null) return Optional.of(versionProblem);
    if (artifact == null || artifact.isBlank() || artifact.length() > 2048) {
      return Optional.of("artifact: must be a non-blank URI of at most 2048 characters, was " + quote(artifact));
    }
    if (Ids.hasControlCharacter(artifact)) {
      return Optional.of("artifact: must not contain control characters (newline, tab …)");
    }
    if (endpoint == null || endpoint.isBlank() || endpoint.length() > 2048) {
      return Optional.of("endpoint: must be non-blank, at most 2048 characters, was " + quote(endpoint));
    }
    return Optional.empty();
  }

  /**
   * A hand-registered artifact that is loaded into the model server (a local adapter directory:
   * {@code /dir} or a {@code file:} URI) must name a directory by its absolute path. {@code file:}
   * alone, {@code file:relative/dir} and {@code file://host/dir} were registered (201), then sent to
   * vLLM as an empty or relative {@code lora_path} (the host taken for the first directory), and the
   * version ended DEPLOY_FAILED on input the registration should have refused.
   */
  static Optional<String> adapterDirectory(String artifact) {
    String rest = artifact.startsWith("file:") ? artifact.substring("file:".length()) : artifact;
    if (rest.startsWith("//") && !rest.startsWith("///")) {
      return Optional.of("artifact: a file: URI of an adapter directory must not name a host (file:///path/to/adapter),"
          + " was " + quote(artifact));
    }
    String path = rest.startsWith("///") ? rest.substring(2) : rest;
    if (!path.startsWith("/") || path.length() < 2 || path.startsWith("//")) {
      return Optional.of("artifact: an adapter directory must be an absolute path (/path/to/adapter or"
          + " file:///path/to/adapter), was " + quote(artifact));
    }
    return Optional.empty();
  }

  /** Optional; else a model name as OpenAI clients send one: 1–256 visible characters, no spaces. */
  static Optional<String> servedModel(String servedModel) {
    if (servedModel == null) return Optional.empty();
    if (servedModel.isEmpty() || servedModel.length() > MAX_SERVED_MODEL
        || !servedModel.codePoints().allMatch(ch -> ch > 0x20 && ch != 0x7f && !Character.isWhitespace(ch)
            && !Character.isISOControl(ch))) {
      return Optional.of("servedModel: must be 1 to " + MAX_SERVED_MODEL
          + " characters without spaces or control characters (the model name sent upstream), or absent");
    }
    return Optional.empty();
  }

  static final int MAX_SERVED_MODEL = 256;

  static Optional<String> offlineMetrics(Map<String, Double> metrics) {
    if (metrics == null) {
      return Optional.empty();
    }
    for (Map.Entry<String, Double> e : metrics.entrySet()) {
      Double v = e.getValue();
      if (e.getKey() == null || v == null || v.isNaN() || v.isInfinite()) {
        return Optional.of("offlineMetrics." + e.getKey() + ": must be a finite number, was " + v);
      }
      boolean rate = Metric.TASK_SUCCESS_RATE.key().equals(e.getKey())
          || Metric.USER_SATISFACTION.key().equals(e.getKey());
      if (rate && (v < 0 || v > 1)) {
        return Optional.of("offlineMetrics." + e.getKey() + ": must be between 0 and 1, was " + v);
      }
      if (Metric.RESPONSE_LATENCY.key().equals(e.getKey()) && v < 0) {
        return Optional.of("offlineMetrics." + e.getKey() + ": must be >= 0 ms, was " + v);
      }
    }
    return Optional.empty();
  }

  static Optional<String> outcome(RecordOutcome c) {
    if (c.sessionId() == null || c.sessionId().isBlank()) {
      return Optional.of("sessionId: must not be blank");
    }
    if (c.modelVersion() == null || c.modelVersion().isBlank()) {
      return Optional.of("modelVersion: must not be blank");
    }
    if (c.rating() != null && !(c.rating() >= 1 && c.rating() <= 5)) {
      return Optional.of("rating: must be between 1 and 5 or absent, was " + c.rating());
    }
    if (c.thumbsUp() < 0 || c.thumbsDown() < 0) {
      return Optional.of("thumbsUp/thumbsDown: must be >= 0, were " + c.thumbsUp() + "/" + c.thumbsDown());
    }
    if (c.latencyP95Ms() != null && !(c.latencyP95Ms() >= 0 && !c.latencyP95Ms().isInfinite())) {
      return Optional.of("latencyP95Ms: must be a finite number >= 0 or absent, was " + c.latencyP95Ms());
    }
    return GuardrailInput.validate(c.modelCalls(), c.upstreamErrors(), c.tokens());
  }

  private static String quote(String s) {
    return s == null ? "null" : "'" + s + "'";
  }
}
