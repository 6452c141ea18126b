/**
 * Journal replay for audits (design §1, §7.1 {@code /v1/audit/{kind}/{id}?asOf=}, §7.4 {@code audit}).
 *
 * <h2>What is read</h2>
 * {@link io.otl.persistence.audit.AuditReader} reads the journal table directly ({@link
 * io.otl.persistence.JournalRows}: one {@code SELECT} per window of 500 rows, ordered by sequence
 * number, deleted rows skipped, each row deserialized with its stored serializer id and manifest and
 * passed through the write plugin's event adapters, as pekko-persistence-jdbc's {@code
 * currentEventsByPersistenceId} does, without its per-query stream set-up: benchmarks W6); it never
 * writes and never sends a message to an entity, so auditing a live entity does not disturb it.
 * Kinds and journals:
 * <ul>
 *   <li>{@code session} — {@code AgentSession|<sessionId>};
 *   <li>{@code coordinator} — {@code TrainingCoordinator|<agentId>};
 *   <li>{@code model} — {@code ModelVersion|<agentId>};
 *   <li>{@code job} — the {@code JobEvent}s of that job in {@code TrainingCoordinator|<agentId of
 *       job-<n>-<agentId>>} (filtered while paging; sequence numbers and cursors are the
 *       coordinator's).
 * </ul>
 *
 * <h2>Pages and cursors</h2>
 * {@code page(kind, id, after, limit)} returns at most {@code limit} (1–1000) events with
 * sequence number above {@code after}, oldest first, and {@code next} = the last sequence number
 * returned, or null when nothing follows. A page reads at most one window beyond what it returns
 * (constant memory whatever the history's length). Each event: {@code seqNr}, {@code at} (the
 * event's own {@code at}, else the journal's write time), {@code type} (event class simple name),
 * {@code event} (the event as JSON, ISO-8601 times).
 *
 * <h2>As of T</h2>
 * "Known at T" is decided per event by the server's clock: a session event's {@code recordedAt}
 * (its {@code at} comes from the client and may be back-dated or in the future), a coordinator or
 * model event's {@code at} (the entity's injected clock at decision time). The journal is replayed
 * from sequence number 1 and stops at the first event known after T, through the entity's own pure
 * event handler ({@code AgentSession.State.apply}, {@code TrainingCoordinator.applyEvent}, {@code
 * ModelVersion.applyEvent}); the view is the one the live GET answers with ({@code
 * io.otl.wire.Views.session}, {@code ModelVersion.view}, {@code TrainingCoordinator.jobView};
 * the coordinator's view is {@code io.otl.wire.Views.coordinator}: the journal-derived fields
 * of GET /v1/training/{agentId} plus every job, with the {@code nextScheduledRun} it would have
 * named at T; {@code minSamples}/{@code triggers}/{@code backend}, like a model's step deadline, are the agent's
 * configuration with the run-time overrides of the replayed state laid over it). Snapshots are not used:
 * the newest may be later than T. Cost: one full read of the entity's journal per request, linear
 * in its length (the rate of a recovery without snapshots), acceptable on the audit path. A time
 * before the entity's first event is "not found" (404) with the time of that first event; a time
 * in the future gives the current state. With {@code asOf}, pages list only the events known at T.
 *
 * <h2>Lineage</h2>
 * Model version → {@code VersionRegistered.sourceJobId} → the job's {@code JobRequested}
 * (trajectories taken) and {@code DatasetExported} (manifest: path, count, sha256, the exact
 * trajectory ids written) → {@code JobSucceeded} (candidate). Session → its agent (from {@code
 * SessionStarted}) → every job of that agent's coordinator whose {@code JobRequested} took it
 * (whether the exported dataset contains it) → the model versions registered from those jobs.
 * HTTP: {@code GET /v1/audit/lineage/model/{agentId}[?version=v7]}, {@code
 * /v1/audit/lineage/session/{sessionId}}, {@code /v1/audit/lineage/job/{jobId}}.
 *
 * <h2>Verify</h2>
 * {@link io.otl.persistence.audit.JournalVerifier} replays every {@code AgentSession|},
 * {@code TrainingCoordinator|} and/or {@code ModelVersion|} journal through the read journal
 * ({@code currentPersistenceIds()} filtered by prefix) and reports events that fail to
 * deserialize (or are not events of that entity) and sequence-number gaps, which stop a
 * pekko-persistence-jdbc 1.1.1 recovery.
 * H2 trap found while testing it: a copy of an H2 file opened with {@code AUTO_SERVER=TRUE} may
 * be served by the original database's server, so open copies without {@code AUTO_SERVER}.
 */
package io.otl.persistence.audit;
