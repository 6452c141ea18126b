package io.otl.core.api;

import java.util.Map;

/**
 * Checks a whole {@code PUT /v1/training/{agentId}/policy} body before anything changes. Its two
 * parts go to two entities (the training keys to the agent's TrainingCoordinator, the {@code
 * model-update.*} keys to its ModelVersion), each of which checks its own part again; checking both
 * first means a bad key in either part changes neither.
 */
@FunctionalInterface
public interface PolicyCheck {
  /**
   * @param training the training keys as sent
   * @param rollout the {@code model-update} keys as sent
   * @throws IllegalArgumentException naming the first bad key (a 400)
   */
  void check(String agentId, Map<String, Object> training, Map<String, Object> rollout);
}
