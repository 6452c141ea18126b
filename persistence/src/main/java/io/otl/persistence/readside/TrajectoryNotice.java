package io.otl.persistence.readside;

import io.otl.core.session.SessionModel;
import java.time.Instant;
import java.util.List;

/**
 * A trajectory completed ({@code revision = false}) or its reward was revised by late feedback
 * ({@code revision = true}). Delivered at least once; {@code (sessionId, eventId)} identifies it,
 * so a consumer deduplicates on that pair (or on {@code ordering}).
 *
 * @param msgIds the inference service's response ids of the session's assistant messages, in
 *     order (what Trinity's {@code POST /feedback} needs); empty when the feed runs with
 *     {@code resolve-msg-ids = off} or no assistant message carried one
 * @param ordering the event's position in the journal (the feed's offset)
 * @param at the event's time
 * @param recordedAt when the node wrote the event (the server's clock; {@code at} may be a client's
 *     time), or {@code at} for events written before it was kept: a canary counts a completion only
 *     if it was written after the rollout began, however late the feed delivers it
 */
public record TrajectoryNotice(
    String sessionId,
    String agentId,
    String modelVersion,
    String eventId,
    boolean revision,
    double reward,
    double qualityScore,
    SessionModel.Outcome outcome,
    List<String> msgIds,
    long ordering,
    Instant at,
    Instant recordedAt) {

  public TrajectoryNotice {
    msgIds = List.copyOf(msgIds);
  }
}
