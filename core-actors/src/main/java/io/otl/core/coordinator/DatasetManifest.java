package io.otl.core.coordinator;

import io.otl.core.JsonSerializable;
import java.util.List;

/**
 * The manifest of one exported dataset, recorded in the job (lineage: exactly which trajectories
 * trained the model).
 *
 * @param path the JSON Lines file, on a path the training backend can read
 * @param count lines written (DPO may write fewer lines than trajectories: one per pair)
 * @param sha256 hex SHA-256 of the file
 * @param sessionIds the trajectories actually written
 * @param piiFindings names of the PII rules the final scan found in the file (e.g. {@code phone});
 *     empty when clean. Any finding fails the job.
 * @param format the line format, e.g. {@code sft-messages}, {@code dpo}, {@code rl-task}
 */
public record DatasetManifest(
    String path,
    int count,
    String sha256,
    List<String> sessionIds,
    List<String> piiFindings,
    String format)
    implements JsonSerializable {
  public DatasetManifest {
    sessionIds = sessionIds == null ? List.of() : List.copyOf(sessionIds);
    piiFindings = piiFindings == null ? List.of() : List.copyOf(piiFindings);
  }

  public boolean clean() {
    return piiFindings.isEmpty();
  }
}
