/**
 * ModelVersion (design §3.3): the model versions of one agent, their rollout and routing.
 *
 * <h2>Classes</h2>
 *
 * <ul>
 *   <li>{@link io.otl.core.model.ModelVersion} — the event-sourced entity (entity key = agentId,
 *       {@code ENTITY_TYPE_KEY} "ModelVersion"): the behaviour, wiring each command to its
 *       handler per phase. It implements the four namespaces below, so {@code ModelVersion.Promote},
 *       {@code ModelVersion.State} and the like name their types.
 *   <li>{@link io.otl.core.model.ModelProtocol} (commands, replies), {@link
 *       io.otl.core.model.ModelEvents} (persisted facts), {@link io.otl.core.model.ModelState}
 *       (state and snapshot), {@link io.otl.core.model.ModelViews} (GET /v1/models/{agentId}).
 *   <li>{@code ModelCommandHandlers} (validate, decide on a {@code Plan}, persist, reply), with
 *       {@code DeploymentCommands} (load/unload outcomes, v0, retention ends), {@code
 *       RolloutCommands} (pause, resume, outcomes, the step timer) and {@code ModelWrites}, and
 *       {@code ModelEventHandler} (the pure event handler, also used by replays and the audit).
 *   <li>Pure rules the handlers call: {@code RolloutPlanner} (which version starts, what a step's
 *       decision records), {@code OfflineGate}, {@code ModelValidation}, {@code DeploymentPlanner},
 *       {@link io.otl.core.model.Deployments}, {@link io.otl.core.model.Supersession}, {@link
 *       io.otl.core.model.EvalEvidence}; {@code DeploymentCalls} makes the serving calls.
 *   <li>{@link io.otl.core.model.ModelSettings} — {@code agentscope.training.model-update.*}.
 *   <li>{@link io.otl.core.model.CanaryRules} — the step rule (pure), with {@link
 *       io.otl.core.model.SequentialTest} and {@link io.otl.core.model.Msprt} (always-valid
 *       degradation tests) and {@link io.otl.core.model.SampleRatioCheck} (guardrail); {@link
 *       io.otl.core.model.CanaryStatistics} holds the fixed-level tests used before, for
 *       comparison and old events.
 *   <li>{@link io.otl.core.model.RoutingTable} — deterministic, sticky session routing (pure).
 *   <li>{@link io.otl.core.model.OutcomeAggregates}, {@link io.otl.core.model.LatencyHistogram},
 *       {@link io.otl.core.model.SessionSet} — constant-size metrics and rollout deduplication.
 * </ul>
 *
 * <h2>Choices made where the design is silent</h2>
 *
 * <ol>
 *   <li><b>One candidate at a time.</b> While a candidate is in CANARY, RAMP or PAUSED, another
 *       version that passes the gate waits in READY. When the rollout ends (promoted or rolled
 *       back) and auto-deploy is on, the <em>oldest</em> READY version starts its canary (FIFO,
 *       so every trained model gets measured). Its offline gate was run against the stable of its
 *       registration time. Promoting a READY version while another rolls out is refused (409).
 *   <li><b>First version.</b> When the node knows the agent's base model, it is registered as
 *       {@code v0}, STABLE, before the agent's first command ({@code BaseModelRegistered}), so
 *       the first fine-tune canaries against it. Without a base model there is nothing to compare
 *       a canary with, so the first READY version becomes STABLE directly; the event says so.
 *   <li><b>Deployment</b> ({@link io.otl.core.model.Deployments}): with a serving backend that
 *       loads versions, READY → DEPLOYING → CANARY once the load is confirmed, or DEPLOY_FAILED;
 *       one version deploys at a time (it blocks auto-deploy and Promote like a rollout);
 *       Promote retries a DEPLOY_FAILED version. ROLLED_BACK versions, and RETIRED ones no
 *       rollback can restore, are unloaded.
 *   <li><b>Promote</b>: READY → CANARY (→ STABLE for the first version); CANARY/RAMP/PAUSED →
 *       STABLE at once, skipping the remaining steps (an operator's override, recorded as manual).
 *   <li><b>Rollback</b>: CANARY/RAMP/PAUSED → ROLLED_BACK (the stable keeps serving); STABLE →
 *       ROLLED_BACK and the most recently RETIRED version whose {@code retainedUntil} (promotion
 *       time + retain-previous) has not passed becomes STABLE again. Refused while a rollout runs
 *       against that stable, and when no previous stable is retained. After the retention
 *       deadline nothing is deleted; the version just cannot be restored (the view shows the
 *       deadline so the deployment can be torn down).
 *   <li><b>Pause/Resume</b>: PAUSED holds the ratio and never advances, but a degradation still
 *       rolls it back. Resume returns to CANARY/RAMP at the same step, keeps what the step has
 *       measured and restarts the step's duration from the resume. Pause of a paused version and
 *       resume of a running one are acknowledged without change.
 *   <li><b>rollback-on-degradation = false</b>: a degraded candidate is PAUSED (once) with the
 *       figures instead of rolled back; an operator decides.
 *   <li><b>What is measured.</b> Outcomes are persisted (one untagged {@code OutcomeRecorded} per
 *       session) only during a rollout, for the candidate and for the stable. The stable's
 *       baseline is therefore measured <em>concurrently</em> with the candidate, in the same step
 *       window, which avoids comparing against a different time of day or week. Outside a
 *       rollout, and for other versions, the reply is {@code IGNORED} with the reason — nothing is
 *       dropped silently. Per version the view also shows the cumulative online metrics.
 *   <li><b>Samples.</b> A metric is tested only when candidate and stable both have at least
 *       min-samples-per-step observations of it in the current step (a session without a rating
 *       or thumbs is not a satisfaction observation). A step advances only when every configured
 *       metric has been tested, none is degraded and step-duration has passed; with too few
 *       samples it waits indefinitely (the view shows the counts). If users rarely rate, drop
 *       user-satisfaction from evaluation-metrics or lower min-samples-per-step.
 *   <li><b>Re-testing after every outcome</b> (as required) is safe: the tests are always valid
 *       (mixture SPRT), Holm-corrected across metrics, with 1 − confidence split over the steps
 *       (see {@link io.otl.core.model.SequentialTest}; Bench C1 measured 0 false rollbacks in
 *       2,000 equal rollouts where the fixed-level tests used before had 20 %). A sample-ratio
 *       mismatch pauses the rollout; an operator's resume silences it for the rest of the step.
 *   <li><b>Deduplication</b> is per version for the whole rollout, on 64-bit hashes of session
 *       ids ({@link io.otl.core.model.SessionSet}); the sets are dropped when the rollout ends.
 *       State therefore grows with the sessions of one rollout (8 bytes each in memory, about 20
 *       characters in a JSON snapshot).
 *   <li><b>The plan is fixed per rollout.</b> {@code RolloutStarted} carries the ratios, so a
 *       configuration change (of the file, or at run time: {@link io.otl.core.model.RolloutPolicy})
 *       does not alter a running rollout; step-duration, min-samples, confidence and tolerances are
 *       read from the current settings at the next step check.
 *   <li><b>Timers.</b> The step start is in state (from the event's {@code at}); after every
 *       transition and on RecoveryCompleted a StepTick is scheduled for the remaining time by the
 *       injected clock. A tick that finds too few samples does not re-arm itself: the next outcome
 *       re-evaluates.
 *   <li><b>Offline gate</b>: every configured metric of the candidate must be at least (latency:
 *       at most) the stable's offline value, within offline-gate-tolerance (relative, default 0).
 *       A metric the candidate lacks fails if the stable has it; a metric without a stable
 *       baseline passes. Versions registered by hand skip the gate (they have no metrics).
 *   <li><b>Registration idempotency</b>: RegisterCandidate repeated with the same artifact and job
 *       is answered with the current status (the coordinator may retry a hand-over); any other
 *       duplicate, and every duplicate RegisterManual, is ALREADY_EXISTS (409).
 *   <li><b>Tags</b>: every {@link io.otl.core.model.ModelEvents.TransitionEvent} carries {@code
 *       model-transitions}; {@code OutcomeRecorded} is untagged so the journal batches it.
 * </ol>
 */
package io.otl.core.model;
