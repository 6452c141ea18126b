package io.otl.core.training;

import io.otl.core.JsonSerializable;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The model a successful job produced.
 *
 * @param checkpointUri where the Hugging Face checkpoint is, e.g. {@code file:///…/huggingface}
 * @param metrics offline evaluation metrics of the run (e.g. {@code task-success-rate}), which the
 *     ModelVersion offline gate compares with the stable version's baseline
 */
public record OutputModel(String checkpointUri, Map<String, Double> metrics)
    implements JsonSerializable {
  public OutputModel {
    Objects.requireNonNull(checkpointUri, "checkpointUri");
    metrics = metrics == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(metrics));
  }
}
