package io.otl.core.model;

import static io.otl.core.model.ModelJournal.T0;
import static io.otl.core.model.ModelJournal.artifact;
import static io.otl.core.model.ModelJournal.concat;
import static io.otl.core.model.ModelJournal.plan;
import static io.otl.core.model.ModelJournal.ready;
import static io.otl.core.model.ModelJournal.replay;
import static io.otl.core.model.ModelJournal.stable;
import static io.otl.core.model.ModelJournal.version;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.entity.Plan;
import io.otl.core.model.Deployments.BaseModelRegistered;
import io.otl.core.model.Deployments.Deployment;
import io.otl.core.model.Deployments.DeploymentConfirmed;
import io.otl.core.model.Deployments.DeploymentFailed;
import io.otl.core.model.Deployments.DeploymentRequested;
import io.otl.core.model.Deployments.UndeployRequested;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelEvents.RolloutStarted;
import io.otl.core.model.ModelEvents.VersionPromoted;
import io.otl.core.model.ModelEvents.VersionRolledBack;
import io.otl.core.model.ModelJournal.LoadingBackend;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionState;
import io.otl.core.serving.BaseModel;
import io.otl.core.serving.Serving;
import io.otl.core.serving.ServingBackend;
import io.otl.core.serving.ServingTarget;
import io.otl.core.serving.StaticServing;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Deployment decisions without an entity (design §3.3 "Deployment", docs/serving.md): the intent
 * before the call, a served name never reused for other weights, the rollout starting in the
 * write that confirms the load, which versions are unloaded (ROLLED_BACK, and RETIRED once no
 * rollback can restore them) and where a route sends a deployed version.
 */
class DeploymentPlannerTest {

  private static final List<Double> STEPS = ModelSettings.defaults().steps();
  private static final Serving LOADING = serving(new LoadingBackend());
  private static final BaseModel BASE = new BaseModel("openai-compatible", "http://base:9000/v1", "qwen2.5-7b");

  private static Serving serving(ServingBackend backend) {
    return new Serving(backend, Optional.empty(), Duration.ofMillis(200), Duration.ofSeconds(30), 5);
  }

  private static String served(String version) {
    return "a1-" + version + "-" + LoadingBackend.sha256Hex8(artifact(version));
  }

  private static List<Event> v0() {
    return List.of(new BaseModelRegistered(BaseModel.VERSION, BASE.provider(), BASE.model(), BASE.endpoint(), T0));
  }

  /** v2 loaded into the server and in CANARY against v0. */
  private static List<Event> v2InCanary() {
    return concat(v0(), ready("v2", T0), List.of(
        new DeploymentRequested("v2", "vllm-lora", LoadingBackend.URL, served("v2"), "auto-deploy", T0),
        new DeploymentConfirmed("v2", LoadingBackend.URL, served("v2"), T0),
        new RolloutStarted("v2", "v0", STEPS, "auto-deploy", T0)));
  }

  // ---- intent and confirmation --------------------------------------------------------------

  @Test
  void theIntentNamesTheBackendTheServerAndTheServedNameBeforeAnyCall() {
    Plan<State, Event> p = plan(replay(concat(v0(), ready("v2", T0))));
    new DeploymentPlanner("a1", LOADING).requestDeployment(p, "v2", "auto-deploy", T0);
    assertEquals(List.of(new DeploymentRequested("v2", "vllm-lora", LoadingBackend.URL, served("v2"),
        "auto-deploy", T0)), p.events());
    assertEquals(VersionState.DEPLOYING, version(p.state(), "v2").state());
    assertEquals(Deployments.Status.REQUESTED, p.state().models().deployments().get("v2").status());
  }

  @Test
  void aServedNameAnotherVersionUsedFailsTheDeploymentAtOnceWithoutACall() {
    // A backend naming adapters by their weights only: v3 registered with v2's artifact gets v2's name.
    ServingBackend byArtifact = new LoadingBackend() {
      @Override
      public ServingTarget target(String agentId, String version, String artifact, String registeredEndpoint) {
        return new ServingTarget(URL, "adapter-" + sha256Hex8(artifact));
      }
    };
    String name = "adapter-" + LoadingBackend.sha256Hex8(artifact("v2"));
    List<Event> events = concat(v0(), ready("v2", T0), List.of(
        new DeploymentRequested("v2", "vllm-lora", LoadingBackend.URL, name, "auto-deploy", T0),
        new DeploymentFailed("v2", name, "refused", 1, T0)));
    events.add(new ModelEvents.VersionRegistered("v3", artifact("v2"), "http://v3", null, Map.of(), true, T0));
    events.add(new ModelEvents.EvaluationStarted("v3", "v0", T0));
    events.add(new ModelEvents.OfflineGatePassed("v3", List.of(), "by hand", T0));
    State s = replay(events);

    Plan<State, Event> p = plan(s);
    new DeploymentPlanner("a1", serving(byArtifact)).requestDeployment(p, "v3", "manual promote", T0);
    assertEquals(2, p.events().size());
    assertEquals(new DeploymentFailed("v3", name, "served model name " + name + " is already used by version v2",
        0, T0), p.events().get(1));
    assertEquals(VersionState.DEPLOY_FAILED, version(p.state(), "v3").state());

    // The version that owns the name may deploy under it again (an operator's retry).
    Plan<State, Event> retry = plan(s);
    new DeploymentPlanner("a1", serving(byArtifact)).requestDeployment(retry, "v2", "manual promote", T0);
    assertEquals(1, retry.events().size());
  }

  @Test
  void aBackendThatNamesNoModelNeverConflicts() {
    Plan<State, Event> p = plan(replay(concat(v0(), ready("v2", T0), ready("v3", T0))));
    ServingBackend unnamed = new LoadingBackend() {
      @Override
      public ServingTarget target(String agentId, String version, String artifact, String registeredEndpoint) {
        return new ServingTarget(URL, null);
      }
    };
    DeploymentPlanner planner = new DeploymentPlanner("a1", serving(unnamed));
    planner.requestDeployment(p, "v2", "x", T0);
    planner.requestDeployment(p, "v3", "x", T0);
    assertTrue(p.events().stream().allMatch(e -> e instanceof DeploymentRequested), p.events().toString());
  }

  @Test
  void aConfirmedLoadStartsTheRolloutAgainstTheStableInTheSameWrite() {
    List<Event> deploying = concat(v0(), ready("v2", T0), List.of(
        new DeploymentRequested("v2", "vllm-lora", LoadingBackend.URL, served("v2"), "auto-deploy", T0)));
    State s = replay(deploying);
    Deployment dep = s.models().deployments().get("v2");
    Plan<State, Event> p = plan(s);
    new DeploymentPlanner("a1", LOADING).confirm(p, "v2", dep, STEPS, T0.plusSeconds(3));
    assertEquals(List.of(
        new DeploymentConfirmed("v2", LoadingBackend.URL, served("v2"), T0.plusSeconds(3)),
        new RolloutStarted("v2", "v0", STEPS, "auto-deploy", T0.plusSeconds(3))), p.events());
    assertEquals(VersionState.CANARY, version(p.state(), "v2").state());

    // Without a stable there is nothing to canary against: only the confirmation is recorded.
    State noStable = replay(concat(ready("v2", T0), List.of(
        new DeploymentRequested("v2", "vllm-lora", LoadingBackend.URL, served("v2"), "auto-deploy", T0))));
    Plan<State, Event> alone = plan(noStable);
    new DeploymentPlanner("a1", LOADING).confirm(alone, "v2", noStable.models().deployments().get("v2"), STEPS, T0);
    assertEquals(1, alone.events().size());
    assertInstanceOf(DeploymentConfirmed.class, alone.events().get(0));

    // A rollout already running (v2) is not started again by a second confirmation.
    State rolling = replay(concat(v2InCanary(), ready("v3", T0), List.of(
        new DeploymentRequested("v3", "vllm-lora", LoadingBackend.URL, served("v3"), "x", T0))));
    Plan<State, Event> busy = plan(rolling);
    new DeploymentPlanner("a1", LOADING).confirm(busy, "v3", rolling.models().deployments().get("v3"), STEPS, T0);
    assertEquals(1, busy.events().size());
  }

  // ---- undeploys -------------------------------------------------------------------------------

  private static List<UndeployRequested> undeploys(Serving serving, Plan<State, Event> p, Instant now) {
    new DeploymentPlanner("a1", serving).planUndeploys(p, now);
    return p.events().stream().filter(e -> e instanceof UndeployRequested).map(e -> (UndeployRequested) e).toList();
  }

  @Test
  void aRolledBackVersionIsUnloadedInTheSameWrite() {
    Plan<State, Event> p = plan(replay(v2InCanary()));
    p.add(new VersionRolledBack("v2", true, "degraded", List.of(), null, T0));
    assertEquals(List.of(new UndeployRequested("v2", served("v2"), "rolled back", T0)), undeploys(LOADING, p, T0));
    assertEquals(Deployments.Status.UNDEPLOYING, p.state().models().deployments().get("v2").status());
  }

  @Test
  void theRestorablePreviousStableStaysLoadedAndIsUnloadedOnceItsRetentionEnds() {
    Instant promoted = T0.plusSeconds(10);
    Instant until = promoted.plus(Duration.ofDays(7));
    List<Event> v3Promoted = concat(v2InCanary(), List.of(
        new VersionPromoted("v2", "v0", until, true, "passed", List.of(), promoted)),
        ready("v3", T0), List.of(
        new DeploymentRequested("v3", "vllm-lora", LoadingBackend.URL, served("v3"), "auto-deploy", T0),
        new DeploymentConfirmed("v3", LoadingBackend.URL, served("v3"), T0),
        new RolloutStarted("v3", "v2", STEPS, "auto-deploy", T0)));
    State s = replay(v3Promoted);
    Instant later = promoted.plusSeconds(100);

    Plan<State, Event> p = plan(s);
    p.add(new VersionPromoted("v3", "v2", later.plus(Duration.ofDays(7)), true, "passed", List.of(), later));
    // v2 retired last and restorable: stays. v0 (retired before) is not restorable any more, but
    // it is served statically, not by this backend: nothing to unload.
    assertEquals(List.of(), undeploys(LOADING, p, later));

    Plan<State, Event> afterRetention = plan(s);
    afterRetention.add(new VersionPromoted("v3", "v2", later.plusSeconds(1), true, "passed", List.of(), later));
    assertEquals(List.of(new UndeployRequested("v2", served("v2"), "retired and no longer restorable",
        later.plusSeconds(1))), undeploys(LOADING, afterRetention, later.plusSeconds(1)));
  }

  @Test
  void anOlderRetiredVersionIsUnloadedWhenANewerOneIsTheRestorablePrevious() {
    // v2 stable (loaded), then v3 promoted over it, then v4 over v3: v2 is no longer restorable.
    Instant t1 = T0.plusSeconds(10);
    Instant t2 = T0.plusSeconds(20);
    Instant t3 = T0.plusSeconds(30);
    List<Event> events = concat(v2InCanary(), List.of(new VersionPromoted("v2", "v0", t1.plus(Duration.ofDays(7)),
        true, "passed", List.of(), t1)), ready("v3", T0), List.of(
        new DeploymentRequested("v3", "vllm-lora", LoadingBackend.URL, served("v3"), "x", T0),
        new DeploymentConfirmed("v3", LoadingBackend.URL, served("v3"), T0),
        new RolloutStarted("v3", "v2", STEPS, "x", T0),
        new VersionPromoted("v3", "v2", t2.plus(Duration.ofDays(7)), true, "passed", List.of(), t2)),
        ready("v4", T0), List.of(
        new DeploymentRequested("v4", "vllm-lora", LoadingBackend.URL, served("v4"), "x", T0),
        new DeploymentConfirmed("v4", LoadingBackend.URL, served("v4"), T0),
        new RolloutStarted("v4", "v3", STEPS, "x", T0)));
    Plan<State, Event> p = plan(replay(events));
    p.add(new VersionPromoted("v4", "v3", t3.plus(Duration.ofDays(7)), true, "passed", List.of(), t3));
    assertEquals(List.of(new UndeployRequested("v2", served("v2"), "retired and no longer restorable", t3)),
        undeploys(LOADING, p, t3));
  }

  @Test
  void nothingIsUnloadedForAStaticBackendAnEmptyPlanOrAnUnconfirmedDeployment() {
    Plan<State, Event> staticPlan = plan(replay(v2InCanary()));
    staticPlan.add(new VersionRolledBack("v2", true, "degraded", List.of(), null, T0));
    assertEquals(List.of(), undeploys(Serving.registeredEndpoints(), staticPlan, T0));

    // Rolled back in an earlier write: a command that decides nothing plans nothing either.
    State rolledBack = replay(concat(v2InCanary(), List.of(
        new VersionRolledBack("v2", true, "degraded", List.of(), null, T0))));
    assertEquals(List.of(), undeploys(LOADING, plan(rolledBack), T0));

    // A deployment that failed was never loaded.
    Plan<State, Event> failed = plan(replay(concat(v0(), ready("v2", T0), List.of(
        new DeploymentRequested("v2", "vllm-lora", LoadingBackend.URL, served("v2"), "x", T0)))));
    failed.add(new DeploymentFailed("v2", served("v2"), "refused", 1, T0));
    assertEquals(List.of(), undeploys(LOADING, failed, T0));

    // Loaded by another backend (the configuration changed): not this backend's to unload.
    Plan<State, Event> other = plan(replay(v2InCanary()));
    other.add(new VersionRolledBack("v2", true, "degraded", List.of(), null, T0));
    ServingBackend renamed = new LoadingBackend() {
      @Override
      public String name() {
        return "other-server";
      }
    };
    assertEquals(List.of(), undeploys(serving(renamed), other, T0));
  }

  // ---- where a route goes ----------------------------------------------------------------------

  @Test
  void aRouteFollowsTheCurrentConfigurationForConfirmedDeployments() {
    State s = replay(v2InCanary());
    // The vLLM server moved between restarts: the confirmed adapter is served at its new URL.
    Serving moved = serving(new LoadingBackend("http://vllm-2:8000/v1"));
    DeploymentPlanner planner = new DeploymentPlanner("a1", moved);
    assertEquals("http://vllm-2:8000/v1", planner.currentEndpoint(s.models(), "v2", "recorded"));
    assertEquals(served("v2"), planner.servedModel(s.models(), "v2"));

    // v0's base model URL comes from the model section as configured now.
    DeploymentPlanner withBase = new DeploymentPlanner("a1",
        moved.withBaseModel(new BaseModel("openai-compatible", "http://base-2:9000/v1", BASE.model())));
    assertEquals("http://base-2:9000/v1", withBase.currentEndpoint(s.models(), "v0", "recorded"));
    assertEquals(BASE.model(), withBase.servedModel(s.models(), "v0"));
    // Another base model name means other weights: the recorded endpoint stays.
    DeploymentPlanner otherBase = new DeploymentPlanner("a1",
        moved.withBaseModel(new BaseModel("openai-compatible", "http://base-2:9000/v1", "llama")));
    assertEquals("recorded", otherBase.currentEndpoint(s.models(), "v0", "recorded"));
    // Without a base model configured, v0 keeps its recorded endpoint (served statically).
    assertEquals("recorded", planner.currentEndpoint(s.models(), "v0", "recorded"));
  }

  @Test
  void unconfirmedOrForeignDeploymentsKeepTheRecordedEndpoint() {
    State deploying = replay(concat(v0(), ready("v2", T0), List.of(
        new DeploymentRequested("v2", "vllm-lora", LoadingBackend.URL, served("v2"), "x", T0))));
    DeploymentPlanner loading = new DeploymentPlanner("a1", LOADING);
    assertEquals("recorded", loading.currentEndpoint(deploying.models(), "v2", "recorded"));
    assertEquals("recorded", loading.currentEndpoint(deploying.models(), "v9", "recorded"), "no deployment");
    assertNull(loading.servedModel(deploying.models(), "v2"), "a loading backend names nothing unconfirmed");

    State s = replay(v2InCanary());
    ServingBackend renamed = new LoadingBackend("http://elsewhere") {
      @Override
      public String name() {
        return "other-server";
      }
    };
    assertEquals("recorded", new DeploymentPlanner("a1", serving(renamed)).currentEndpoint(s.models(), "v2",
        "recorded"));
    assertEquals("recorded", new DeploymentPlanner("a1", Serving.registeredEndpoints())
        .currentEndpoint(s.models(), "v2", "recorded"), "static serving calls no server");
  }

  /**
   * Under static a rollout records its deployment now (trial t136): the name recorded is the one a
   * route sends; "" records none, so the agent's own name (or a later configured one) still goes.
   */
  @Test
  void aStaticDeploymentRecordsTheConfiguredNameAndNoneForTheAgentsOwn() {
    State s = replay(concat(stable("v1", T0), ready("v2", T0)));
    Serving named = serving(new StaticServing("qwen-served"));
    Plan<State, Event> p = plan(s);
    new DeploymentPlanner("a1", named).deployAtOwnEndpoint(p, "v2", "auto-deploy", STEPS, T0);
    assertEquals("qwen-served", p.state().models().deployments().get("v2").servedModel());
    assertEquals("qwen-served", new DeploymentPlanner("a1", serving(new StaticServing("renamed")))
        .servedModel(p.state().models(), "v2"), "a recorded name stays the version's");

    Plan<State, Event> own = plan(s);
    new DeploymentPlanner("a1", Serving.registeredEndpoints()).deployAtOwnEndpoint(own, "v2", "auto-deploy", STEPS, T0);
    assertNull(own.state().models().deployments().get("v2").servedModel());
    assertNull(new DeploymentPlanner("a1", Serving.registeredEndpoints()).servedModel(own.state().models(), "v2"));
    assertEquals("renamed", new DeploymentPlanner("a1", serving(new StaticServing("renamed")))
        .servedModel(own.state().models(), "v2"), "none recorded: the configuration in force decides, as before");
  }

  @Test
  void aStaticBackendSendsItsConfiguredModelNameOrTheAgentsOwn() {
    State s = replay(concat(stable("v1", T0), ready("v2", T0)));
    Serving named = serving(new StaticServing("qwen-served"));
    assertEquals("qwen-served", new DeploymentPlanner("a1", named).servedModel(s.models(), "v1"));
    assertNull(new DeploymentPlanner("a1", Serving.registeredEndpoints()).servedModel(s.models(), "v1"));
  }
}
