package io.otl.core.coordinator;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.otl.core.JsonSerializable;
import java.util.List;

/**
 * What a job's dataset continues from (issue #16, continual training), recorded in its manifest so
 * lineage shows it: the checkpoint the job starts from, the replayed older trajectories and the
 * held-out evaluation set exported with it. Absent ({@code null}) in manifests written before
 * continual training; every field is optional so those journals read as they are.
 *
 * @param startFrom {@code stable} or {@code base}: where the job actually starts (after a fallback)
 * @param startVersion the stable version whose checkpoint the job starts from (null: base model)
 * @param startCheckpoint that version's checkpoint URI (null: the configured base model)
 * @param startNote why, in words, e.g. "no stable checkpoint yet: starting from the base model"
 * @param replayCount older trajectories replayed into this dataset (before deduplication)
 * @param replaySessionIds those trajectories, in the order they were sampled
 * @param evalPath the held-out evaluation file ({@code <dataset-dir>/<jobId>/test.jsonl}, or {@code
 *     <jobId>.eval.jsonl} from earlier builds), null when none
 * @param evalCount lines in it
 * @param evalSha256 hex SHA-256 of it
 * @param evalSessionIds the held-out trajectories (never in any training file)
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record DatasetLineage(
    String startFrom,
    String startVersion,
    String startCheckpoint,
    String startNote,
    int replayCount,
    List<String> replaySessionIds,
    String evalPath,
    int evalCount,
    String evalSha256,
    List<String> evalSessionIds)
    implements JsonSerializable {
  public DatasetLineage {
    replaySessionIds = replaySessionIds == null ? List.of() : List.copyOf(replaySessionIds);
    evalSessionIds = evalSessionIds == null ? List.of() : List.copyOf(evalSessionIds);
  }

  /** True when the job starts from a trained checkpoint rather than the base model. */
  public boolean startsFromCheckpoint() {
    return startCheckpoint != null && !startCheckpoint.isBlank();
  }
}
