package io.otl.core.training;

import io.otl.core.JsonSerializable;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;

/**
 * Counters read from the Trinity proxy's {@code GET /metrics}.
 *
 * @param modelVersions model index i to {@code rollout/model_{i}/model_version}
 * @param totalExperienceCount {@code rollout/total_experience_count}
 * @param readyExperienceCount {@code rollout/ready_experience_count}
 * @param exploreStepNum {@code explore_step_num}
 */
public record ProxyMetrics(
    Map<Integer, Integer> modelVersions,
    long totalExperienceCount,
    long readyExperienceCount,
    long exploreStepNum)
    implements JsonSerializable {

  public ProxyMetrics {
    modelVersions =
        modelVersions == null ? Map.of() : Collections.unmodifiableMap(new TreeMap<>(modelVersions));
  }

  /** The newest version any rollout model serves, or 0 when the proxy reported none. */
  public int latestModelVersion() {
    return modelVersions.values().stream().mapToInt(Integer::intValue).max().orElse(0);
  }
}
