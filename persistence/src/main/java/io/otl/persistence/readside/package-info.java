/**
 * Read side (design §3.2, §4, §10): resumable streams of tagged journal events with their offsets
 * stored in the journal.
 *
 * <ul>
 *   <li>{@link io.otl.persistence.readside.TaggedEventFeed}: the generic core — one tag, a mapping
 *       {@code EventEnvelope -> Optional<T>}, one consumer; a cluster singleton per feed name;
 *       at-least-once delivery acknowledged in journal order, offsets in
 *       {@link io.otl.persistence.readside.FeedOffsetStore} ({@code FeedOffset|<feed>}), and a
 *       periodic reconciliation against events that commit late on PostgreSQL.
 *   <li>{@link io.otl.persistence.readside.TrajectoryFeed}: tag {@code trajectory}
 *       (TrajectoryCompleted, RewardRevised) as {@link io.otl.persistence.readside.TrajectoryNotice}s
 *       to a {@link io.otl.persistence.readside.TrajectorySink}.
 * </ul>
 *
 * <p>At-least-once delivery plus a consumer idempotent on (sessionId, eventId) — or on the
 * ordering — gives an exactly-once effect: every completion is counted once after any crash.
 *
 * <p>Settings: {@code agentscope.training.read-side} ({@code read-side.conf}).
 */
package io.otl.persistence.readside;
