package io.otl.core.coordinator;

/**
 * How long a cancel waits for the backend to take the stop of a submission it never acknowledged
 * (a job still REQUESTED: its submission failed, or its outcome is unknown). Such a submission
 * might still have started a job on the cluster (Ray's submission id is the job id, so the stop of
 * it is idempotent and is always attempted), but an unreachable trainer must not hold the agent's
 * next job hostage: after {@link #MAX_ATTEMPTS} failed stops (with the submit back-off between
 * them) the job is CANCELLED with what is unknown recorded as its error. Counted per incarnation
 * of the entity: after a restart, a cancel still pending gets its attempts again, so it stays
 * bounded and the stop is re-sent at least once.
 */
final class CancelRetries {
  private CancelRetries() {}

  static final int MAX_ATTEMPTS = 5;

  /** The job's error: what the coordinator could not find out, and what an operator may check. */
  static String unconfirmed(String jobId, int attempts, String error) {
    return "cancelled without the backend's confirmation: its submission was never acknowledged and "
        + attempts + " attempts to stop it failed (last error: " + error + "); if a submission of " + jobId
        + " reached the cluster it may still run there (check or stop submission id " + jobId + " on Ray)";
  }
}
