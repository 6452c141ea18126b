package io.otl.core.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.model.Deployments.DeploymentConfirmed;
import io.otl.core.model.Deployments.DeploymentFailed;
import io.otl.core.model.Deployments.Undeployed;
import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelEvents.RolloutStarted;
import io.otl.core.model.ModelProtocol.Command;
import io.otl.core.model.ModelProtocol.Disposition;
import io.otl.core.model.ModelProtocol.ErrorCode;
import io.otl.core.model.ModelProtocol.Failure;
import io.otl.core.model.ModelProtocol.OutcomeAck;
import io.otl.core.model.ModelProtocol.OutcomeReply;
import io.otl.core.model.ModelProtocol.RouteDecision;
import io.otl.core.model.ModelProtocol.RouteReply;
import io.otl.core.model.ModelProtocol.TransitionReply;
import io.otl.core.model.ModelProtocol.VersionStatus;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionState;
import io.otl.core.serving.BaseModel;
import io.otl.core.serving.Serving;
import io.otl.core.serving.ServingTarget;
import io.otl.core.testing.EntityTestKits;
import io.otl.core.testing.ManualClock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The command handlers' refusals, acknowledgements and deployment outcomes, one command at a time
 * with a hand-moved clock (the package's "choices where the design is silent", docs/serving.md):
 * every refusal names its reason and persists nothing; outcomes outside a rollout are IGNORED with
 * the reason; a retryable load failure is retried until max-attempts; a late outcome of an older
 * call is ignored. Deployment outcomes are delivered by the test: its model server never answers.
 */
class ModelCommandsTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = EntityTestKits.start("ModelCommandsTest");
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /** A model server whose calls never complete: the test sends the outcomes. */
  static final class SilentServer extends ModelJournal.LoadingBackend {
    @Override
    public CompletionStage<Void> deploy(ServingTarget target, String artifact) {
      return new CompletableFuture<>();
    }

    @Override
    public CompletionStage<Void> undeploy(ServingTarget target) {
      return new CompletableFuture<>();
    }
  }

  private static final Serving SILENT = new Serving(new SilentServer(), Optional.empty(),
      Duration.ofHours(1), Duration.ofHours(1), 3);

  private final ManualClock clock = new ManualClock(T0);
  private EventSourcedBehaviorTestKit<Command, Event, State> kit;
  private String agent;

  private void entity(String modelUpdate, Serving serving) {
    ModelSettings settings = ModelSettings.fromConfig(EntityTestKits.training(
        "step-duration = 1h, retain-previous = 7d, " + modelUpdate));
    agent = "agent-" + java.util.UUID.randomUUID();
    kit = EventSourcedBehaviorTestKit.create(testKit.system(),
        ModelVersion.create(agent, settings, clock, serving),
        EventSourcedBehaviorTestKit.enabledSerializationSettings());
  }

  private <R> CommandResultWithReply<Command, Event, State, R> run(Function<ActorRef<R>, Command> f) {
    return kit.runCommand(f);
  }

  private CommandResultWithReply<Command, Event, State, TransitionReply> transition(
      Function<ActorRef<TransitionReply>, Command> f) {
    return kit.runCommand(f);
  }

  private CommandResultWithReply<Command, Event, State, OutcomeReply> outcomeOf(
      Function<ActorRef<OutcomeReply>, Command> f) {
    return kit.runCommand(f);
  }

  private TransitionReply manual(String v) {
    // A local adapter directory: loaded by a backend that loads versions, even registered by hand.
    return transition(r -> new ModelProtocol.RegisterManual(v, "file:///ckpt/" + v, "http://" + v, r))
        .reply();
  }

  private CommandResultWithReply<Command, Event, State, TransitionReply> promote(String v) {
    return run(r -> new ModelProtocol.Promote(v, r));
  }

  private CommandResultWithReply<Command, Event, State, TransitionReply> rollback(String v, String reason) {
    return run(r -> new ModelProtocol.Rollback(v, reason, r));
  }

  private CommandResultWithReply<Command, Event, State, OutcomeReply> outcome(String session, String v) {
    return run(r -> new ModelProtocol.RecordOutcome(session, v, true, 4.0, 1, 0, 900.0, r));
  }

  private static Failure failure(ErrorCode code, CommandResultWithReply<?, ?, ?, ?> result) {
    assertTrue(result.events().isEmpty(), "a refusal persists nothing: " + result.events());
    Failure f = assertInstanceOf(Failure.class, result.reply());
    assertEquals(code, f.code(), f.message());
    return f;
  }

  /** v1 STABLE (first version, promoted directly), v2 in CANARY against it. */
  private void stableAndCanary() {
    entity("", Serving.registeredEndpoints());
    assertEquals(VersionState.STABLE, ((VersionStatus) manual("v1")).state());
    assertEquals(VersionState.CANARY, ((VersionStatus) manual("v2")).state());
  }

  @Test
  void registrationIsIdempotentOnlyForTheSameCandidate() {
    entity("auto-deploy = false", Serving.registeredEndpoints());
    CommandResultWithReply<Command, Event, State, TransitionReply> first = run(r -> new ModelProtocol.RegisterCandidate(
        "v1", "s3://ckpt/v1", "http://v1", "job-1", Map.of("task-success-rate", 0.8), r));
    assertTrue(((VersionStatus) first.reply()).created());
    CommandResultWithReply<Command, Event, State, TransitionReply> again = run(r -> new ModelProtocol.RegisterCandidate(
        "v1", "s3://ckpt/v1", "http://v1", "job-1", Map.of("task-success-rate", 0.8), r));
    assertTrue(again.events().isEmpty());
    assertEquals(new VersionStatus(agent, "v1", VersionState.READY, 0.0, false, List.of()), again.reply());
    assertEquals("version v1 already exists (it is READY)", failure(ErrorCode.ALREADY_EXISTS,
        transition(r -> new ModelProtocol.RegisterCandidate(
            "v1", "s3://ckpt/other", "http://v1", "job-1", Map.of(), r)))
        .message());
    failure(ErrorCode.ALREADY_EXISTS,
        transition(r -> new ModelProtocol.RegisterCandidate("v1", "s3://ckpt/v1", "http://v1", "job-2", Map.of(), r)));
    failure(ErrorCode.ALREADY_EXISTS,
        transition(r -> new ModelProtocol.RegisterManual("v1", "s3://ckpt/v1", "http://v1", r)));
    failure(ErrorCode.INVALID_INPUT, transition(r -> new ModelProtocol.RegisterCandidate(
        "v2", "s3://ckpt/v2", "http://v2", "job-2", Map.of("task-success-rate", 1.5), r)));
    failure(ErrorCode.INVALID_INPUT, transition(r -> new ModelProtocol.RegisterManual("v2", " ", "http://v2", r)));
  }

  @Test
  void promoteAndRollbackRefuseWithTheReason() {
    stableAndCanary();
    manual("v3");
    assertEquals("version v9 is not registered", failure(ErrorCode.NOT_FOUND, promote("v9")).message());
    assertEquals("cannot promote v3: it is READY and v2 is already in rollout (CANARY at 0.05, step 0 of 3); "
        + "only one candidate rolls out at a time", failure(ErrorCode.INVALID_TRANSITION, promote("v3")).message());
    assertEquals("cannot promote v1: it is STABLE", failure(ErrorCode.INVALID_TRANSITION, promote("v1")).message());
    failure(ErrorCode.NOT_FOUND, rollback("v9", null));
    assertEquals("cannot roll back v1: it is STABLE and v2 is in rollout (CANARY at 0.05, step 0 of 3) against "
        + "it; roll back or promote v2 first", failure(ErrorCode.INVALID_TRANSITION, rollback("v1", null)).message());
    assertEquals("cannot roll back v3: it is READY", failure(ErrorCode.INVALID_TRANSITION, rollback("v3", "x"))
        .message());
  }

  @Test
  void aManualPromoteSkipsTheRemainingStepsAndTheRollbackOfTheStableRestoresThePrevious() {
    stableAndCanary();
    clock.advance(Duration.ofMinutes(5));
    var promoted = promote("v2");
    ModelEvents.VersionPromoted e = assertInstanceOf(ModelEvents.VersionPromoted.class, promoted.events().get(0));
    assertTrue(!e.automatic(), "an operator's override is recorded as manual");
    assertEquals("manual promote from CANARY at 0.05, step 0 of 3, remaining steps skipped", e.reason());
    assertEquals(T0.plus(Duration.ofMinutes(5)).plus(Duration.ofDays(7)), e.previousRetainedUntil());
    assertEquals(new VersionStatus(agent, "v2", VersionState.STABLE, 1.0,
        false, List.of()), promoted.reply());

    var restored = rollback("v2", "  ");
    ModelEvents.VersionRolledBack rb = assertInstanceOf(ModelEvents.VersionRolledBack.class, restored.events().get(0));
    assertEquals("manual rollback", rb.reason(), "a blank reason adds nothing");
    assertEquals("v1", rb.restoredStable());
    assertEquals(VersionState.ROLLED_BACK, ((VersionStatus) restored.reply()).state());
    // v1 is stable again and nothing else is retained: a second rollback is refused.
    assertEquals("cannot roll back v1: it is STABLE and no previous stable is retained (retain-previous = 7d)",
        failure(ErrorCode.INVALID_TRANSITION, rollback("v1", null)).message());
  }

  @Test
  void aRolledBackCanaryLetsTheNextReadyVersionStart() {
    stableAndCanary();
    manual("v3");
    var result = rollback("v2", "operator says so");
    ModelEvents.VersionRolledBack rb = assertInstanceOf(ModelEvents.VersionRolledBack.class, result.events().get(0));
    assertEquals("manual rollback: operator says so", rb.reason());
    // Under static too, the next version is deployed (nothing called) and confirmed in the same write.
    assertEquals("v3", assertInstanceOf(Deployments.DeploymentRequested.class, result.events().get(1)).version());
    assertInstanceOf(DeploymentConfirmed.class, result.events().get(2));
    assertEquals("v3", assertInstanceOf(RolloutStarted.class, result.events().get(3)).version());
  }

  @Test
  void pauseAndResumeAcknowledgeWithoutChangeWhenThereIsNothingToDo() {
    stableAndCanary();
    assertEquals("cannot pause v1: it is STABLE",
        failure(ErrorCode.INVALID_TRANSITION, transition(r -> new ModelProtocol.Pause("v1", r))).message());
    failure(ErrorCode.NOT_FOUND, transition(r -> new ModelProtocol.Pause("v9", r)));
    failure(ErrorCode.INVALID_TRANSITION, transition(r -> new ModelProtocol.Resume("v1", r)));
    failure(ErrorCode.NOT_FOUND, transition(r -> new ModelProtocol.Resume("v9", r)));
    var notPaused = transition(r -> new ModelProtocol.Resume("v2", r));
    assertTrue(notPaused.events().isEmpty());
    assertEquals(List.of("not paused"), ((VersionStatus) notPaused.reply()).reasons());
    var paused = transition(r -> new ModelProtocol.Pause("v2", r));
    assertEquals(VersionState.PAUSED, ((VersionStatus) paused.reply()).state());
    assertEquals(0.05, ((VersionStatus) paused.reply()).ratio());
    var again = transition(r -> new ModelProtocol.Pause("v2", r));
    assertTrue(again.events().isEmpty());
    assertEquals(List.of("already paused"), ((VersionStatus) again.reply()).reasons());
    clock.advance(Duration.ofMinutes(10));
    var resumed = transition(r -> new ModelProtocol.Resume("v2", r));
    assertEquals(VersionState.CANARY, ((VersionStatus) resumed.reply()).state());
    assertEquals(T0.plus(Duration.ofMinutes(10)),
        ((ModelState.RollingOut) kit.getState()).rollout().stepStartedAt(), "the step's duration restarts");

    // Outside a rollout pause and resume are refusals too.
    rollback("v2", null);
    failure(ErrorCode.INVALID_TRANSITION, transition(r -> new ModelProtocol.Pause("v2", r)));
    failure(ErrorCode.NOT_FOUND, transition(r -> new ModelProtocol.Resume("v9", r)));
  }

  @Test
  void outcomesAreMeasuredOnlyForTheCandidateAndTheStableDuringARolloutAndOncePerSession() {
    entity("", Serving.registeredEndpoints());
    manual("v1");
    OutcomeAck idle = assertInstanceOf(OutcomeAck.class, outcome("s1", "v1").reply());
    assertEquals(Disposition.IGNORED, idle.disposition());
    assertTrue(idle.detail().startsWith("no rollout in progress"), idle.detail());
    failure(ErrorCode.INVALID_INPUT,
        outcomeOf(r -> new ModelProtocol.RecordOutcome(" ", "v1", true, 4.0, 0, 0, null, r)));

    manual("v2");
    manual("v3");
    var recorded = outcome("s1", "v2");
    assertEquals(1, recorded.events().size());
    assertEquals(new OutcomeAck("s1", "v2", Disposition.RECORDED, "recorded"), recorded.reply());
    var stable = outcome("s2", "v1");
    assertEquals(Disposition.RECORDED, ((OutcomeAck) stable.reply()).disposition());
    var duplicate = outcome("s1", "v2");
    assertTrue(duplicate.events().isEmpty());
    assertEquals(new OutcomeAck("s1", "v2", Disposition.DUPLICATE, "session s1 was already counted for v2"),
        duplicate.reply());
    assertEquals(new OutcomeAck("s3", "v3", Disposition.IGNORED,
        "v3 is neither the candidate v2 nor the stable v1; not measured"), outcome("s3", "v3").reply());
    assertEquals(new OutcomeAck("s4", "v9", Disposition.IGNORED, "unknown version v9; not measured"),
        outcome("s4", "v9").reply());
    failure(ErrorCode.INVALID_INPUT,
        outcomeOf(r -> new ModelProtocol.RecordOutcome("s5", "v2", true, 9.0, 0, 0, null, r)));
  }

  private CommandResultWithReply<Command, Event, State, OutcomeReply> completedAt(String session, String v,
      Instant at) {
    return run(r -> new ModelProtocol.RecordOutcome(session, v, true, 4.0, 1, 0, 900.0, r, null, null, null, null, at));
  }

  @Test
  void anOutcomeCompletedBeforeTheRolloutBeganIsNotMeasuredHoweverLateItArrives() {
    stableAndCanary(); // v2's rollout began at T0
    var early = completedAt("s-early", "v1", T0.minusSeconds(1));
    assertTrue(early.events().isEmpty(), "nothing persisted for it");
    OutcomeAck ack = assertInstanceOf(OutcomeAck.class, early.reply());
    assertEquals(Disposition.IGNORED, ack.disposition());
    assertTrue(ack.detail().contains("before the rollout of v2 began"), ack.detail());

    clock.advance(Duration.ofMinutes(10));
    transition(r -> new ModelProtocol.Pause("v2", r));
    clock.advance(Duration.ofMinutes(10));
    transition(r -> new ModelProtocol.Resume("v2", r));
    // a resume is no new rollout: what completed after T0 still counts
    assertEquals(Disposition.RECORDED,
        ((OutcomeAck) completedAt("s-during", "v1", T0.plusSeconds(60)).reply()).disposition());
    assertEquals(Disposition.RECORDED,
        ((OutcomeAck) completedAt("s-candidate", "v2", T0).reply()).disposition());
    assertEquals(Disposition.RECORDED, ((OutcomeAck) outcome("s-unknown-time", "v1").reply()).disposition(),
        "an outcome without its completion time is measured as before");
  }

  @Test
  void aStepTickBeforeTheDeadlineWhilePausedOrWithTooFewSamplesPersistsNothing() {
    stableAndCanary();
    clock.advance(Duration.ofMinutes(59));
    assertTrue(kit.runCommand(ModelProtocol.StepTick.INSTANCE).events().isEmpty());
    clock.advance(Duration.ofMinutes(2));
    assertTrue(kit.runCommand(ModelProtocol.StepTick.INSTANCE).events().isEmpty(), "no samples: the step waits");
    assertEquals(VersionState.CANARY, ((ModelState.RollingOut) kit.getState()).models().require("v2").state());
  }

  @Test
  void routesNameTheVersionOrSayWhyThereIsNone() {
    entity("", Serving.registeredEndpoints());
    assertEquals("sessionId: must not be blank",
        failure(ErrorCode.INVALID_INPUT, this.<RouteReply>run(r -> new ModelProtocol.Route(" ", r))).message());
    Failure none = failure(ErrorCode.NO_VERSION, this.<RouteReply>run(r -> new ModelProtocol.Route("s1", r)));
    // An embedded node with HTTP off has no registration: the base model is its way to a version (trial t64).
    assertEquals("agent " + agent + " has no stable version and no candidate in rollout; configure a base model "
        + "(the model section's base URL and model name: it serves as v0), or register a version with POST "
        + "/v1/models/" + agent + "/versions", none.message());
    manual("v1");
    RouteDecision d = (RouteDecision) this.<RouteReply>run(r -> new ModelProtocol.Route("s1", r)).reply();
    assertEquals("v1", d.version());
    assertEquals("http://v1", d.endpoint());
    assertNull(d.servedModel());
    assertEquals("s1", d.sessionId());
  }

  // ---- deployment outcomes --------------------------------------------------------------------

  /** v0 from the base model, v2 registered and DEPLOYING on the silent server. */
  private String deploying() {
    entity("", SILENT.withBaseModel(new BaseModel("openai-compatible", "http://base/v1", "qwen")));
    assertEquals(VersionState.DEPLOYING, ((VersionStatus) manual("v2")).state());
    assertEquals("v0", kit.getState().models().stable(), "v0 was registered before the first command");
    return kit.getState().models().deployments().get("v2").servedModel();
  }

  @Test
  void theViewNamesWhereTheBaseModelIsServedNowAfterItsUrlMoved() {
    // v0 was registered at http://base/v1; the node restarts with the model section's base_url moved.
    // The gateway already called the new URL; GET /v1/models/{agent} still named the old one.
    deploying();
    Serving moved = SILENT.withBaseModel(new BaseModel("openai-compatible", "http://base-2/v1", "qwen"));
    EventSourcedBehaviorTestKit<Command, Event, State> restarted = EventSourcedBehaviorTestKit.create(testKit.system(),
        ModelVersion.create(agent, ModelSettings.fromConfig(EntityTestKits.training(
            "step-duration = 1h, retain-previous = 7d")), clock, moved),
        EventSourcedBehaviorTestKit.enabledSerializationSettings());
    ModelViews.VersionView v0 = restarted.<ModelViews.ModelsView>runCommand(ModelProtocol.Get::new).reply()
        .versions().stream().filter(v -> v.version().equals("v0")).findFirst().orElseThrow();
    assertEquals("http://base-2/v1", v0.endpoint());
    assertEquals("http://base-2/v1", v0.deployment().endpoint(), v0.toString());
    RouteDecision d = (RouteDecision) restarted.<RouteReply>runCommand(r -> new ModelProtocol.Route("s9", r)).reply();
    assertEquals("http://base-2/v1", d.endpoint(), "the view and the route agree");
  }

  private List<Event> deployOutcome(String served, int attempt, String error, boolean retryable) {
    return kit.runCommand(new DeploymentCalls.DeployOutcome("v2", served, attempt, error, retryable)).events();
  }

  @Test
  void aConfirmedLoadStartsTheCanary() {
    String served = deploying();
    List<Event> events = deployOutcome(served, 1, null, false);
    assertInstanceOf(DeploymentConfirmed.class, events.get(0));
    assertEquals("v0", assertInstanceOf(RolloutStarted.class, events.get(1)).stableVersion());
    assertTrue(deployOutcome(served, 1, null, false).isEmpty(), "a second outcome of the same load changes nothing");
  }

  @Test
  void retryableFailuresAreRetriedUntilMaxAttemptsAndARefusalFailsAtOnce() {
    String served = deploying();
    assertTrue(deployOutcome(served, 1, "503 busy", true).isEmpty(), "attempt 2 follows");
    assertTrue(deployOutcome(served, 2, "503 busy", true).isEmpty(), "attempt 3 follows");
    DeploymentFailed failed =
        assertInstanceOf(DeploymentFailed.class, deployOutcome(served, 3, "503 busy", true).get(0));
    assertEquals(3, failed.attempts(), "max-attempts 3");
    assertEquals(VersionState.DEPLOY_FAILED, kit.getState().models().require("v2").state());

    String again = deploying();
    DeploymentFailed refused = assertInstanceOf(DeploymentFailed.class,
        deployOutcome(again, 1, "404 adapter path not found", false).get(0));
    assertEquals(1, refused.attempts());
    assertEquals("404 adapter path not found", refused.error());
  }

  @Test
  void anOutcomeForAnotherNameOrAVersionNotDeployingIsIgnored() {
    String served = deploying();
    assertTrue(deployOutcome("some-older-name", 1, null, false).isEmpty());
    assertTrue(kit.runCommand(new DeploymentCalls.DeployOutcome("v9", served, 1, null, false)).events().isEmpty());
    assertTrue(kit.runCommand(new DeploymentCalls.UndeployOutcome("v2", served, 1, null)).events().isEmpty(),
        "v2 is not being unloaded");
  }

  @Test
  void anUnloadIsRetriedOnErrorAndRecordedOnSuccess() {
    String served = deploying();
    deployOutcome(served, 1, null, false);
    List<Event> rb = rollback("v2", null).events();
    assertInstanceOf(Deployments.UndeployRequested.class, rb.get(rb.size() - 1));
    assertTrue(kit.runCommand(new DeploymentCalls.UndeployOutcome("v2", served, 1, "503")).events().isEmpty());
    List<Event> done = kit.runCommand(new DeploymentCalls.UndeployOutcome("v2", served, 2, null)).events();
    assertEquals(List.of(new Undeployed("v2", served, T0)), done);
  }
}
