/**
 * TrainingCoordinator (design §3.2): one per agent; the training pool, triggers, pre-flight
 * checklist, training jobs and the hand-over of trained models to ModelVersion.
 *
 * <h2>Classes</h2>
 *
 * <ul>
 *   <li>{@link io.otl.core.coordinator.TrainingCoordinator}: the event-sourced entity (entity key
 *       = agentId, {@code ENTITY_TYPE_KEY} "TrainingCoordinator", persistence id
 *       {@code TrainingCoordinator|<agentId>}) and its handlers for the pool, triggers, policy,
 *       recovery and cancel; {@code JobSteps} (export, submission or commit, polling, cancel on the
 *       backend, hand-over), {@code ProxyLoop} (trinity-proxy) and {@code ScheduleTrigger} hold the
 *       other handlers. Each decides a {@code Plan} (events applied as added, persisted together).
 *   <li>Its types, one file each kind: {@link io.otl.core.coordinator.CoordinatorProtocol}
 *       (commands), {@link io.otl.core.coordinator.CoordinatorReplies} (replies and views), {@link
 *       io.otl.core.coordinator.CoordinatorEvents} and {@link io.otl.core.coordinator.CoordinatorState},
 *       as nested records of interfaces the entity implements, so {@code TrainingCoordinator.State}
 *       and the like still name them. {@link io.otl.core.coordinator.CoordinatorEventHandler}: the
 *       pure static {@code applyEvent}/{@code replay} (also for audits).
 *   <li>Pure rules: {@code PoolRules} (counting once), {@code Preflight} (threshold and checklist),
 *       {@code ScheduleSlots} (due cron slots), {@code JobLifecycle} (backend answers), {@code
 *       ProxyRules}; {@code PortCalls} makes every port call fail into its stage.
 *   <li>{@link io.otl.core.coordinator.TrainingPolicy}: {@code agentscope.training.training-runner}.
 *   <li>Ports, implemented outside the domain: {@link io.otl.core.coordinator.DatasetExporter}
 *       ({@link io.otl.core.coordinator.ExportRequest} → {@link io.otl.core.coordinator.DatasetManifest}),
 *       {@link io.otl.core.coordinator.CandidateSink}, and {@code io.otl.core.training.TrainingBackend}
 *       / {@code OnlineTrainingBackend}.
 *   <li>{@link io.otl.core.coordinator.PersistentMap}: the immutable, structurally shared session map.
 * </ul>
 *
 * <h2>Choices made where the design is silent</h2>
 *
 * <ol>
 *   <li><b>State is immutable, with structural sharing.</b> The pool can hold 100,000 sessions or
 *       more. Pekko sends the state object to the snapshot store, which serializes it asynchronously
 *       on another thread, so a mutable state would need a copy per snapshot and would also be
 *       unsafe to hand to the test kit or to an audit replay. Instead the session maps are
 *       persistent hash tries (Scala's {@code immutable.HashMap}, wrapped in {@code PersistentMap}):
 *       one event costs O(log n). Every state value can be shared, and {@code applyEvent} is a
 *       pure static function. "State as of T" replays from {@code State.EMPTY} with it. Snapshots
 *       every 100 events, keeping 2. In a unit test, 100,000 pooled trajectories apply in about
 *       0.5–1.5 s, and their snapshot makes a JSON round trip in about 1 s when warm (540 KB
 *       gzipped).
 *   <li><b>Counting once.</b> Every session id the coordinator has seen is remembered as POOLED,
 *       FILTERED (quality below min-quality) or USED (taken by a job), as long as a repeat of it can
 *       still come (see below). A repeat is a DUPLICATE and
 *       persists nothing. A revision ({@code RewardRevised}) of a pooled session whose time is
 *       newer than the stored one updates its reward and quality ({@code RewardUpdated}) without
 *       counting it again. An older revision, out of order, is a duplicate. A revision that raises a
 *       FILTERED session to min-quality pools it (counted once, then). If a revision arrives
 *       before its completion, the revision counts first and the later completion is a duplicate.
 *       Used sessions never come back. The pool is ordered oldest fact first (ties by id).
 *       Used and filtered sessions are forgotten once no revision can reach them ({@code
 *       SessionForgetting}, {@code SessionsForgotten}): counted in write times ({@code recordedAt},
 *       the server's clock), when the feed has delivered something written more than the feedback
 *       window plus 1 h (clock skew) after their last message, at most once per hour of feed time and
 *       never while a job is active (a pre-flight that fails after the export returns the job's used
 *       sessions). A message of a session no longer known, written before {@code forgottenBefore} plus
 *       the window, is a DUPLICATE: a redelivery never pools a forgotten session again. Pooled
 *       sessions are never forgotten.
 *   <li><b>Threshold</b> fires when the pool reaches min-samples and no job is active (so at most
 *       once per crossing: a job takes the whole pool). If a job is active, it fires when that job
 *       ends. If a pre-flight fails, the pool is returned and the threshold re-arms only after the
 *       pool grows by 10 % of min-samples (at least 1). This stops it from creating a failed job
 *       for every new trajectory.
 *   <li><b>Scheduled.</b> The timer is computed from the injected clock (at most 6 h per timer;
 *       early ticks just re-arm). The slot handled is persisted ({@code ScheduledSlotFired} /
 *       {@code ScheduledSlotSkipped}), so a slot never fires twice. At start-up, the latest slot
 *       missed while no node ran (the slots after the last handled one, up to now) fires once
 *       ({@code missed = true}) with missed-slots = fire, or is recorded as skipped with skip.
 *       Earlier missed slots are covered by it. A slot is skipped with a reason when the pool is
 *       empty or a job is active; otherwise the pre-flight runs (and may fail). The first start,
 *       and any change of cron or zone, records {@code ScheduleArmed(from = now)}, so a new
 *       schedule never fires "missed" slots from before it existed. Zone: {@code trigger.zone}
 *       (default UTC).
 *   <li><b>Manual</b> is always accepted, whatever {@code trigger.type} says. A second trigger
 *       while a job is active is refused with CONFLICT, naming the job.
 *   <li><b>Pre-flight checklist</b>, run at trigger time: enough samples (at least min-samples for
 *       threshold; at least 1 for manual and scheduled), the pool's mean quality at least
 *       min-quality, base model set. "No other job active" is enforced before a job exists (see
 *       above). "No PII" is checked on the exported file: the exporter's final scan reports rule
 *       names. A failure records {@code JobRequested} + {@code PreflightFailed(reasons)}: the job
 *       is visible as FAILED with the reasons (error and history), and a manual trigger still
 *       answers {@code TriggerAccepted} (202) with status FAILED and the reasons. The pool is
 *       returned, except after a PII finding. Those trajectories stay with the failed job
 *       (lineage shows them), because they would fail every later job. An empty exported dataset
 *       also fails the pre-flight and returns the pool.
 *   <li><b>Jobs</b>: id {@code job-<seq>-<agentId>} (seq 1, 2, 3… per agent; {@code agentIdOf}
 *       parses it back). At most one active job per agent. Intent before effect:
 *       {@code JobRequested} before export, {@code JobSubmitting(attempt)} before
 *       {@code submit} (the job id is the backend's submission id, so re-sending after a crash
 *       never creates a second job), {@code JobSucceeded(version)} before the hand-over. Export,
 *       submission, cancel and hand-over failures are retried with capped exponential back-off
 *       (submit-retry min..max). A job whose export or retryable submission fails stays REQUESTED,
 *       with the last error and the next attempt time in its error and history. A non-retryable
 *       submission failure fails the job. Polling every poll-interval while SUBMITTED/RUNNING (a
 *       job found SUCCEEDED while SUBMITTED is recorded RUNNING first: it ran between polls). A
 *       backend that no longer knows the job (404) fails it. STOPPED on the backend is CANCELLED.
 *       Trajectories taken by a job that later fails or is cancelled are not returned to the pool.
 *   <li><b>Candidate names</b>: {@code v<n>}, where n = 1 + the number of this agent's jobs that
 *       succeeded with a model before. The name is recorded in {@code JobSucceeded}, so it never
 *       changes on replay. When ModelVersion answers that another version holds it (one an
 *       operator registered by hand), the candidate is offered as the next name ({@code v<n+1>},
 *       {@code proxy-<n+1>}, … see {@code CandidateNames}), never merged into that version; the
 *       name it ends on is recorded in {@code CandidateHandedOver(version, renamedFrom)} and is
 *       the job's candidate from then on. A retry after a crash walks the same names. The
 *       artifact is the checkpoint URI. The endpoint is the checkpoint URI too: the node's
 *       {@code CandidateSink} may map it to a serving endpoint.
 *   <li><b>Cancel</b>: a job never submitted is CANCELLED at once. Otherwise
 *       {@code JobCancelRequested}, then {@code backend.cancel}, then {@code JobCancelled} (also
 *       when the backend no longer knows it). A submission accepted after the cancellation is
 *       stopped again; so is one accepted while its stop was under way (the stop, sent while the
 *       job was REQUESTED, found no job there: that 404 does not cancel a job now SUBMITTED). A job whose submission the backend never acknowledged (REQUESTED after a
 *       submission attempt) is stopped too, since an unknown outcome may have started it on the
 *       cluster, but an unreachable backend is asked only {@code CancelRetries.MAX_ATTEMPTS} times
 *       (submit back-off between them; again after a restart): then {@code JobCancelled} with
 *       {@code unconfirmed} ends it, what is unknown being its error, and the agent's next trigger
 *       is accepted. A SUBMITTED or RUNNING job is asked until the backend answers: it runs there.
 *       Replies: {@code CancelAccepted} (202), {@code Refused(NOT_FOUND)} (404),
 *       {@code Refused(CONFLICT, "job … is SUCCEEDED")} (409).
 *   <li><b>trinity-proxy</b>: each pooled trajectory with msgIds has its reward forwarded once
 *       ({@code forwardReward(msgIds, reward, sessionId, 0)}, then {@code RewardForwarded}). After
 *       a crash between the two, it is forwarded again (at least once). Filtered trajectories are
 *       not forwarded. A revision after forwarding is not forwarded again. A trigger makes a
 *       commit job ({@code JobRequested}, {@code JobSubmitting}, {@code commit()},
 *       {@code JobSucceeded} without a model). Rewards still being forwarded then go to the next
 *       batch. The proxy's {@code metrics()} is polled every poll-interval. A model version above
 *       the last one seen records {@code ProxyModelObserved} and is handed over as
 *       {@code proxy-<n>} (endpoint = trinity-endpoint + {@code /v1}, the proxy's OpenAI base URL;
 *       source job = the latest commit job,
 *       metrics = the proxy's counters). If several versions pass between two polls, only the
 *       newest is handed over. A version below the last one seen is a restarted proxy counting
 *       again: {@code ProxyRestarted(k, version)} (also at 0), versions count from there, and a
 *       version above it is {@code ProxyModelObserved(restarts = k)}, handed over as
 *       {@code proxy-r<k>-<n>} with artifact {@code …#model_version=<n>&restarts=<k>}.
 *   <li><b>Tags</b>: every {@code JobEvent} (job lifecycle, hand-over, proxy model observed)
 *       carries {@code coordinator-jobs}. Pool and schedule events are untagged.
 *   <li><b>Keep-alive</b>: timers live in the entity. The node must keep coordinators running
 *       (remember-entities, or no passivation for this entity type plus a start-up ping per agent),
 *       otherwise a passivated coordinator handles its scheduled slot late, as a missed slot, when
 *       it next wakes up.
 * </ol>
 */
package io.otl.core.coordinator;
