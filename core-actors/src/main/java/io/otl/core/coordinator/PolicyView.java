package io.otl.core.coordinator;

import java.time.Instant;
import java.util.Map;

/**
 * GET/PUT {@code /v1/training/{agentId}/policy}: the agent's policy in force and where it differs
 * from the file.
 *
 * @param policy every overridable key with the value in force (file, then run-time overrides); over
 *     HTTP also the agent's {@code model-update.*} keys in force (its ModelVersion's)
 * @param overrides the run-time overrides only (empty: the file's policy); over HTTP with the
 *     {@code model-update.*} ones
 * @param changedBy who set them last, null when never
 * @param changedAt when, null when never
 */
public record PolicyView(
    String agentId, Map<String, Object> policy, Map<String, Object> overrides, String changedBy, Instant changedAt)
    implements CoordinatorReplies.PolicyReply {
  public PolicyView {
    // answered from another node: JSON arrays (trigger.type) arrive as Scala lists
    policy = io.otl.core.PlainValues.plain(policy);
    overrides = io.otl.core.PlainValues.plain(overrides);
  }
}
