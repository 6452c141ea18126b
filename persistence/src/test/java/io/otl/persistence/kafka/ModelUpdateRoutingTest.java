package io.otl.persistence.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.model.Deployments;
import io.otl.core.model.ModelEvents;
import io.otl.core.model.ModelState;
import io.otl.core.model.ModelVersion;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The routing a model-updates record publishes is the entity's own: its event handler replayed,
 * then its routing rule (v0 stable, a candidate on its confirmed deployment's endpoint).
 */
class ModelUpdateRoutingTest {
  private static final Instant T = Instant.parse("2026-11-30T00:00:00Z");

  private static ModelState.State replay(ModelEvents.Event... events) {
    ModelState.State s = ModelVersion.initialState();
    for (ModelEvents.Event e : events) s = ModelVersion.applyEvent(s, e);
    return s;
  }

  private static JsonNode routingOf(ModelState.State s, ModelVersion.TransitionEvent last) throws Exception {
    String json = ModelUpdateRecords.json("ModelVersion|a", 9, "a", last, s);
    return PublishedJson.MAPPER.readTree(json).get("routing");
  }

  private static final ModelEvents.Event[] CANARY = {
      new Deployments.BaseModelRegistered("v0", "openai-compatible", "base-7b", "http://base/v1", T),
      new ModelVersion.VersionRegistered("v1", "file:///ckpt/v1", "file:///ckpt/v1", "job-1", Map.of(), false, T),
      new Deployments.DeploymentRequested("v1", "vllm-lora", "http://vllm/v1", "a-v1-1234", "auto-deploy", T),
      new Deployments.DeploymentConfirmed("v1", "http://vllm/v1", "a-v1-1234", T),
      new ModelVersion.RolloutStarted("v1", "v0", List.of(0.05, 0.2, 1.0), "auto-deploy", T)};

  @Test
  void aCanaryIsPublishedOnItsDeploymentEndpointBesideTheBaseModel() throws Exception {
    JsonNode r = routingOf(replay(CANARY), (ModelVersion.TransitionEvent) CANARY[4]);
    assertEquals("v0", r.get("stable").asText());
    assertEquals("http://base/v1", r.get("stableEndpoint").asText());
    assertEquals("v1", r.get("candidate").asText());
    assertEquals("http://vllm/v1", r.get("candidateEndpoint").asText());
    assertEquals(0.05, r.get("candidateRatio").asDouble(), 1e-9);
  }

  /**
   * Under vllm-lora stable and candidate share one server: the served model name is what tells
   * them apart, and the table published without it (before trial t72) sent a consumer's candidate
   * share to whatever that endpoint serves by the agent's model name.
   */
  @Test
  void versionsOnOneServerArePublishedWithTheirServedModelNames() throws Exception {
    ModelEvents.Event[] shared = CANARY.clone();
    shared[0] = new Deployments.BaseModelRegistered("v0", "vllm", "base-7b", "http://vllm/v1", T);
    JsonNode r = routingOf(replay(shared), (ModelVersion.TransitionEvent) shared[4]);
    assertEquals(r.get("stableEndpoint").asText(), r.get("candidateEndpoint").asText(), "one server: " + r);
    assertEquals("base-7b", r.get("stableServedModel").asText());
    assertEquals("a-v1-1234", r.get("candidateServedModel").asText());
  }

  /** Before its deployment is confirmed a candidate serves nothing: it is not in the table yet. */
  @Test
  void withoutACandidateItsServedModelIsNull() throws Exception {
    JsonNode r = routingOf(replay(java.util.Arrays.copyOf(CANARY, 3)), (ModelVersion.TransitionEvent) CANARY[2]);
    assertEquals("base-7b", r.get("stableServedModel").asText());
    assertTrue(r.get("candidate").isNull(), r.toString());
    assertTrue(r.get("candidateServedModel").isNull(), r.toString());
  }

  @Test
  void afterARollbackOnlyTheStableIsPublished() throws Exception {
    ModelVersion.VersionRolledBack rollback =
        new ModelVersion.VersionRolledBack("v1", true, "error rate worse", List.of(), null, T.plusSeconds(60));
    ModelEvents.Event[] events = java.util.Arrays.copyOf(CANARY, CANARY.length + 1);
    events[CANARY.length] = rollback;
    JsonNode r = routingOf(replay(events), rollback);
    assertEquals("v0", r.get("stable").asText());
    assertTrue(r.get("candidate").isNull(), r.toString());
    assertEquals(0.0, r.get("candidateRatio").asDouble(), 1e-9);
  }
}
