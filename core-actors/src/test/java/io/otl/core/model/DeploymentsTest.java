package io.otl.core.model;

import static io.otl.core.model.ModelJournal.T0;
import static io.otl.core.model.ModelJournal.concat;
import static io.otl.core.model.ModelJournal.ready;
import static io.otl.core.model.ModelJournal.replay;
import static io.otl.core.model.ModelJournal.stable;
import static io.otl.core.model.ModelJournal.version;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.model.Deployments.BaseModelRegistered;
import io.otl.core.model.Deployments.Deployment;
import io.otl.core.model.Deployments.DeploymentConfirmed;
import io.otl.core.model.Deployments.DeploymentFailed;
import io.otl.core.model.Deployments.DeploymentRequested;
import io.otl.core.model.Deployments.Status;
import io.otl.core.model.Deployments.UndeployRequested;
import io.otl.core.model.Deployments.Undeployed;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelEvents.RolloutStarted;
import io.otl.core.model.ModelState.HistoryEntry;
import io.otl.core.model.ModelState.RollingOut;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionRecord;
import io.otl.core.model.ModelState.VersionState;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The deployment facts' effect on the state (docs/serving.md "Deployment in the state machine"):
 * v0 STABLE from the start with a static deployment, READY → DEPLOYING → (rollout | DEPLOY_FAILED)
 * with the deployment record following REQUESTED → CONFIRMED | FAILED, and UNDEPLOYING →
 * UNDEPLOYED; a deployment fact never ends or starts a rollout by itself.
 */
class DeploymentsTest {

  private static final String URL = "http://vllm:8000/v1";

  private static HistoryEntry last(VersionRecord v) {
    return v.history().get(v.history().size() - 1);
  }

  @Test
  void theBaseModelIsVersionZeroStableFromTheStartOnAStaticDeployment() {
    State s = replay(List.of(new BaseModelRegistered("v0", "openai-compatible", "qwen2.5-7b", "http://base/v1", T0)));
    assertEquals("v0", s.models().stable());
    VersionRecord v0 = version(s, "v0");
    assertEquals(VersionState.STABLE, v0.state());
    assertEquals("base:qwen2.5-7b", v0.artifact());
    assertEquals("http://base/v1", v0.endpoint());
    assertEquals(List.of(new HistoryEntry(VersionState.STABLE, 1.0, T0,
        "base model qwen2.5-7b from configuration, stable from the start")), v0.history());
    assertEquals(new Deployment("static", "http://base/v1", "qwen2.5-7b", Status.CONFIRMED,
        "base model qwen2.5-7b from configuration, stable from the start", T0), s.models().deployments().get("v0"));
  }

  @Test
  void aRequestedDeploymentMakesTheVersionDeployingAndServingNothing() {
    State s = replay(concat(stable("v1", T0), ready("v2", T0), List.of(
        new DeploymentRequested("v2", "vllm-lora", URL, "a1-v2-abc", "auto-deploy", T0.plusSeconds(1)))));
    VersionRecord v2 = version(s, "v2");
    assertEquals(VersionState.DEPLOYING, v2.state());
    assertEquals(new HistoryEntry(VersionState.DEPLOYING, 0.0, T0.plusSeconds(1),
        "auto-deploy: deploying to vllm-lora as a1-v2-abc"), last(v2));
    assertEquals(new Deployment("vllm-lora", URL, "a1-v2-abc", Status.REQUESTED, "auto-deploy", T0.plusSeconds(1)),
        s.models().deployments().get("v2"));
    assertEquals(ModelViews.ratioOf(s, v2), 0.0);
  }

  @Test
  void aConfirmationRecordsWhereTheVersionIsServedAndLeavesItsStateToTheRollout() {
    List<Event> requested = concat(stable("v1", T0), ready("v2", T0), List.of(
        new DeploymentRequested("v2", "vllm-lora", URL, "a1-v2-abc", "auto-deploy", T0)));
    State s = replay(concat(requested, List.of(new DeploymentConfirmed("v2", "http://vllm-2/v1", "a1-v2-abc",
        T0.plusSeconds(2)))));
    assertEquals(new Deployment("vllm-lora", "http://vllm-2/v1", "a1-v2-abc", Status.CONFIRMED, "loaded",
        T0.plusSeconds(2)), s.models().deployments().get("v2"));
    assertEquals(VersionState.DEPLOYING, version(s, "v2").state());
    // A confirmation without a recorded intent (not written by this code, but replayable) keeps no backend.
    State orphan = replay(concat(stable("v1", T0), List.of(new DeploymentConfirmed("v1", URL, "m", T0))));
    assertNull(orphan.models().deployments().get("v1").backend());
  }

  @Test
  void aFailedDeploymentSaysHowManyAttemptsWereMade() {
    State s = replay(concat(stable("v1", T0), ready("v2", T0), List.of(
        new DeploymentRequested("v2", "vllm-lora", URL, "a1-v2-abc", "auto-deploy", T0),
        new DeploymentFailed("v2", "a1-v2-abc", "503 busy", 5, T0.plusSeconds(9)))));
    VersionRecord v2 = version(s, "v2");
    assertEquals(VersionState.DEPLOY_FAILED, v2.state());
    assertEquals(new HistoryEntry(VersionState.DEPLOY_FAILED, 0.0, T0.plusSeconds(9),
        "deployment failed after 5 attempt(s): 503 busy"), last(v2));
    assertEquals(new Deployment("vllm-lora", URL, "a1-v2-abc", Status.FAILED, "503 busy", T0.plusSeconds(9)),
        s.models().deployments().get("v2"));

    // A name conflict fails before any intent was applied elsewhere: no deployment to update.
    State noIntent = replay(concat(stable("v1", T0), ready("v2", T0), List.of(
        new DeploymentFailed("v2", "taken", "served model name taken", 0, T0))));
    assertEquals(VersionState.DEPLOY_FAILED, version(noIntent, "v2").state());
    assertNull(noIntent.models().deployments().get("v2"));
  }

  @Test
  void undeployingThenUndeployedKeepsTheNameAndTheVersionsState() {
    List<Event> loaded = concat(stable("v1", T0), ready("v2", T0), List.of(
        new DeploymentRequested("v2", "vllm-lora", URL, "a1-v2-abc", "auto-deploy", T0),
        new DeploymentConfirmed("v2", URL, "a1-v2-abc", T0)));
    State undeploying = replay(concat(loaded, List.of(new UndeployRequested("v2", "a1-v2-abc", "rolled back",
        T0.plusSeconds(3)))));
    assertEquals(new Deployment("vllm-lora", URL, "a1-v2-abc", Status.UNDEPLOYING, "rolled back",
        T0.plusSeconds(3)), undeploying.models().deployments().get("v2"));
    State undeployed = ModelEventHandler.apply(undeploying, new Undeployed("v2", "a1-v2-abc", T0.plusSeconds(4)));
    assertEquals(new Deployment("vllm-lora", URL, "a1-v2-abc", Status.UNDEPLOYED, "unloaded", T0.plusSeconds(4)),
        undeployed.models().deployments().get("v2"));
    assertEquals(version(undeploying, "v2").state(), version(undeployed, "v2").state());

    // Facts about a version without a deployment change nothing.
    State plain = replay(stable("v1", T0));
    assertSame(plain, Deployments.apply(plain, new UndeployRequested("v1", "m", "x", T0)).orElseThrow());
    assertSame(plain, Deployments.apply(plain, new Undeployed("v1", "m", T0)).orElseThrow());
  }

  @Test
  void deploymentFactsKeepARunningRolloutAndOtherFactsAreNotTheirs() {
    State rolling = replay(concat(stable("v1", T0), ready("v2", T0), ready("v3", T0), List.of(
        new RolloutStarted("v2", "v1", ModelSettings.defaults().steps(), "auto-deploy", T0))));
    State s = ModelEventHandler.apply(rolling,
        new DeploymentRequested("v3", "vllm-lora", URL, "a1-v3-abc", "manual promote", T0));
    RollingOut r = assertInstanceOf(RollingOut.class, s);
    assertEquals(((RollingOut) rolling).rollout(), r.rollout());
    assertTrue(r.models().deployments().containsKey("v3"));
    for (Event e : List.<Event>of(
        new DeploymentConfirmed("v3", URL, "a1-v3-abc", T0),
        new DeploymentFailed("v3", "a1-v3-abc", "x", 1, T0),
        new UndeployRequested("v3", "a1-v3-abc", "x", T0),
        new Undeployed("v3", "a1-v3-abc", T0))) {
      assertInstanceOf(RollingOut.class, Deployments.apply(s, e).orElseThrow(), e.toString());
    }
    assertEquals(Optional.empty(), Deployments.apply(rolling, new ModelEvents.RolloutResumed("v2", T0)));
  }
}
