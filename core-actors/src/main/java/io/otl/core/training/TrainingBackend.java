package io.otl.core.training;

import java.util.concurrent.CompletionStage;

/**
 * Port through which the TrainingCoordinator drives a batch training backend (design §5, mode
 * {@code ray-jobs}). Implementations live outside the domain (HTTP clients in cluster-config); the
 * domain only sees this interface and the records it exchanges.
 *
 * <p>Every stage fails with a {@link TrainingBackendException} when the backend refuses a request or
 * cannot be reached; {@link TrainingBackendException#retryable()} tells the coordinator whether a
 * retry with backoff makes sense.
 */
public interface TrainingBackend {

  /**
   * Submits a job whose backend submission id is {@code spec.jobId()}.
   *
   * <p>Idempotent: submitting the same job id again never creates a second job. If the backend
   * already knows the id (e.g. our node crashed after submitting but before recording the outcome),
   * the stage completes normally with the existing job's submission.
   */
  CompletionStage<BackendSubmission> submit(TrainingJobSpec spec);

  /** Current state of the job; on {@code SUCCEEDED} it carries the output model. */
  CompletionStage<BackendJobStatus> status(String jobId);

  /** Asks the backend to stop the job; completes once the backend accepted the request. */
  CompletionStage<Void> cancel(String jobId);

  /** The job's log output as the backend returns it (may be large; callers should truncate). */
  CompletionStage<String> logs(String jobId);

  /** Backend type as named in configuration, e.g. {@code ray-jobs}. */
  String type();
}
