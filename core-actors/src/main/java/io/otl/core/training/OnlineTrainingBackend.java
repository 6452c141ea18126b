package io.otl.core.training;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Port for online RL through a Trinity-RFT {@code serve} proxy (design §5, mode {@code
 * trinity-proxy}): agents call the proxy for inference, we forward rewards for their responses,
 * release training batches and watch the model version advance. A new model version there becomes a
 * candidate here.
 *
 * <p>Stages fail with a {@link TrainingBackendException} on refusal or when the proxy is unreachable.
 */
public interface OnlineTrainingBackend {

  /**
   * Attaches a reward to the responses with the given ids (the proxy's chat completion ids, which
   * sessions record as {@code msgId}).
   *
   * @param taskId groups the responses of one task; we use the session id
   * @param runId index of the run within the task (0 for a single run)
   */
  CompletionStage<Void> forwardReward(List<String> msgIds, double reward, String taskId, int runId);

  /** Releases the experiences collected so far to the trainer. */
  CompletionStage<Void> commit();

  /** Progress counters of the proxy. */
  CompletionStage<ProxyMetrics> metrics();

  /** True when the proxy answers its health check; never fails (false when unreachable). */
  CompletionStage<Boolean> health();

  /** Backend type as named in configuration, e.g. {@code trinity-proxy}. */
  String type();
}
