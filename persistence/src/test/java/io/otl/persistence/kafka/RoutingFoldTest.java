package io.otl.persistence.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.model.Deployments;
import io.otl.core.model.ModelVersion;
import io.otl.core.model.RoutingTable;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The routing table published on model-updates follows v0 and deployed endpoints. */
class RoutingFoldTest {
  private static final Instant T = Instant.parse("2026-11-30T00:00:00Z");

  @Test
  void baseModelIsStableAndACandidateIsRoutedToItsDeploymentEndpoint() {
    RoutingFold fold = RoutingFold.EMPTY
        .apply(new Deployments.BaseModelRegistered("v0", "openai-compatible", "base-7b", "http://base/v1", T))
        .apply(new ModelVersion.VersionRegistered("v1", "file:///ckpt/v1", "file:///ckpt/v1", "job-1", Map.of(), false, T))
        .apply(new Deployments.DeploymentRequested("v1", "vllm-lora", "http://vllm/v1", "a-v1-1234", "auto-deploy", T))
        .apply(new Deployments.DeploymentConfirmed("v1", "http://vllm/v1", "a-v1-1234", T))
        .apply(new ModelVersion.RolloutStarted("v1", "v0", List.of(0.05, 0.2, 1.0), "auto-deploy", T));
    RoutingTable t = fold.table();
    assertEquals("v0", t.stableVersion());
    assertEquals("http://base/v1", t.stableEndpoint());
    assertEquals("v1", t.candidateVersion());
    assertEquals("http://vllm/v1", t.candidateEndpoint());
    assertEquals(0.05, t.candidateRatio(), 1e-9);
  }
}
