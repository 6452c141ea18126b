package io.otl.persistence.kafka;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.model.Deployments;
import io.otl.core.model.ModelVersion;
import io.otl.core.model.RoutingTable;
import java.util.HashMap;
import java.util.Map;

/**
 * The routing table of one agent folded from its ModelVersion transition events, the same way the
 * entity derives it from its state: a promotion makes the version stable and ends the rollout, a
 * rollback ends the rollout (restoring the previous stable when the event names one), a rollout
 * start and each step set the candidate's ratio; a pause keeps it.
 */
record RoutingFold(Map<String, String> endpoints, String stable, String candidate, double ratio) {
  static final RoutingFold EMPTY = new RoutingFold(Map.of(), null, null, 0.0);

  RoutingFold apply(ModelVersion.TransitionEvent event) {
    if (event instanceof ModelVersion.VersionRegistered e) {
      Map<String, String> next = new HashMap<>(endpoints);
      next.put(e.version(), e.endpoint());
      return new RoutingFold(Map.copyOf(next), stable, candidate, ratio);
    } else if (event instanceof Deployments.BaseModelRegistered e) {
      Map<String, String> next = new HashMap<>(endpoints);
      next.put(e.version(), e.endpoint());
      return new RoutingFold(Map.copyOf(next), e.version(), candidate, ratio);
    } else if (event instanceof Deployments.DeploymentConfirmed e) {
      // The deployment's endpoint replaces the registered one (a checkpoint path for vllm-lora).
      Map<String, String> next = new HashMap<>(endpoints);
      next.put(e.version(), e.endpoint());
      return new RoutingFold(Map.copyOf(next), stable, candidate, ratio);
    } else if (event instanceof ModelVersion.RolloutStarted e) {
      return new RoutingFold(endpoints, stable, e.version(), e.plan().get(0));
    } else if (event instanceof ModelVersion.StepAdvanced e) {
      return new RoutingFold(endpoints, stable, candidate, e.ratio());
    } else if (event instanceof ModelVersion.VersionPromoted e) {
      return new RoutingFold(endpoints, e.version(), null, 0.0);
    } else if (event instanceof ModelVersion.VersionRolledBack e) {
      return new RoutingFold(endpoints, e.restoredStable() != null ? e.restoredStable() : stable, null, 0.0);
    }
    return this;
  }

  RoutingTable table() {
    return new RoutingTable(stable, stable == null ? null : endpoints.get(stable), candidate,
        candidate == null ? null : endpoints.get(candidate), candidate == null ? 0.0 : ratio);
  }

  /** {@code {"stable","stableEndpoint","candidate","candidateEndpoint","candidateRatio"}}. */
  ObjectNode toJson() {
    RoutingTable t = table();
    ObjectNode out = PublishedJson.MAPPER.createObjectNode();
    out.put("stable", t.stableVersion());
    out.put("stableEndpoint", t.stableEndpoint());
    out.put("candidate", t.candidateVersion());
    out.put("candidateEndpoint", t.candidateEndpoint());
    out.put("candidateRatio", t.candidateRatio());
    return out;
  }
}
