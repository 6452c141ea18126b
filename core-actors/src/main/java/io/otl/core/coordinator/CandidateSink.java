package io.otl.core.coordinator;

import java.util.Map;
import java.util.concurrent.CompletionStage;

/**
 * Port through which the TrainingCoordinator hands a trained model to the agent's ModelVersion
 * entity (design §3.2 "On SUCCEEDED the output model is handed to ModelVersion"). The node
 * implements it with a sharding ask of {@code ModelVersion.RegisterCandidate}, which is
 * idempotent: the coordinator repeats a hand-over it has not recorded as done (after a crash or a
 * failure), with the same arguments.
 *
 * <p>The stage completes when ModelVersion has the candidate (whatever its gate decided) and
 * fails when it could not be reached or refused the registration. A name that another version
 * already holds (one an operator registered by hand, or another job's model) fails the stage with
 * {@link NameTaken}: the candidate is then not there, and the coordinator offers it under the next
 * name ({@link CandidateNames}). Only a version with the same artifact and source job counts as
 * "already there".
 *
 * @see io.otl.core.model.ModelVersion.RegisterCandidate
 */
public interface CandidateSink {

  /**
   * @param version the candidate's name: {@code v<n>} for batch jobs, {@code proxy-<n>} for the
   *     Trinity proxy's model versions
   * @param artifact the checkpoint URI (batch) or the proxy's model reference
   * @param endpoint where the candidate is served
   * @param sourceJobId the job that produced it (null for a proxy version seen before any commit)
   * @param metrics the job's offline evaluation metrics
   * @param trainedFrom the version whose checkpoint the job continued, null when it started from the
   *     base model (ModelVersion holds a candidate whose origin was rolled back meanwhile)
   */
  CompletionStage<Void> register(
      String agentId,
      String version,
      String artifact,
      String endpoint,
      String sourceJobId,
      Map<String, Double> metrics,
      String trainedFrom);

  /**
   * The name is held by another version (not this candidate: another artifact or source job, or
   * registered by hand). Nothing was registered.
   */
  final class NameTaken extends RuntimeException {
    private final String version;

    public NameTaken(String version, String detail) {
      super("version name " + version + " is taken: " + detail);
      this.version = version;
    }

    public String version() {
      return version;
    }
  }
}
