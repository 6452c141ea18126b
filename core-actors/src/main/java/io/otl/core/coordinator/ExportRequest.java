package io.otl.core.coordinator;

import io.otl.core.JsonSerializable;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link DatasetExporter} is asked to write: the trajectories a job took from the pool.
 *
 * @param jobId the job (the exporter names its file and manifest after it, so a repeat of the
 *     same request overwrites the same files: export is idempotent)
 * @param algorithm decides the line format (design §6): sft, dpo, or the RL task shape
 * @param sessionIds the exact trajectories, in the order the job took them
 */
public record ExportRequest(String jobId, String agentId, String algorithm, List<String> sessionIds)
    implements JsonSerializable {
  public ExportRequest {
    Objects.requireNonNull(jobId, "jobId");
    Objects.requireNonNull(agentId, "agentId");
    Objects.requireNonNull(algorithm, "algorithm");
    sessionIds = sessionIds == null ? List.of() : List.copyOf(sessionIds);
  }
}
