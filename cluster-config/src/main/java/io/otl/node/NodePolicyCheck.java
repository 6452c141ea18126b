package io.otl.node;

import io.otl.core.api.PolicyCheck;
import io.otl.core.coordinator.PolicyOverrides;
import io.otl.node.config.NodeSettings;
import java.util.Map;

/**
 * The node's {@link PolicyCheck}: both parts of a {@code PUT …/policy} body through the resolvers the
 * agent's entities use (the start-up validator, the personal-data rule, the model-update entity's own
 * checks), so a body either entity would refuse changes neither.
 */
final class NodePolicyCheck {
  private NodePolicyCheck() {}

  static PolicyCheck of(NodeSettings settings) {
    return (agentId, training, rollout) -> {
      Map<String, Object> flat = PolicyOverrides.flatten(training);
      settings.training().forAgent(agentId).resolver().resolve(flat);
      PolicyOverrides.checkValues(flat);
      settings.rolloutsFor(agentId).resolve(rollout);
    };
  }
}
