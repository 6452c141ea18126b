/**
 * Kafka ingestion and publishing (design §7.2), configured by {@code agentscope.training.kafka}
 * ({@code kafka.conf}, read by {@link io.otl.persistence.kafka.KafkaSettings}).
 *
 * <h2>Starting</h2>
 * <ul>
 *   <li>{@link io.otl.persistence.kafka.KafkaIngest#start(org.apache.pekko.actor.typed.ActorSystem,
 *       io.otl.core.api.DataCollector, KafkaSettings)}: consumes {@code topics.agent-events} on
 *       every node (one consumer group, partitions spread over the nodes).
 *   <li>{@link io.otl.persistence.kafka.KafkaPublisher#startTrajectories} and {@link
 *       io.otl.persistence.kafka.KafkaPublisher#startModelUpdates}: one cluster singleton each.
 * </ul>
 * None of them waits for the broker: a broker that is away is retried with back-off ({@code
 * restart.*}) while the node serves. Topics are not created here; create them up front.
 *
 * <h2>agent-events (in)</h2>
 * Key = sessionId; value = one event object of design §7.1 with {@code sessionId} and {@code
 * agentId}. Offsets are committed only after the journal acknowledged the record or after it was
 * dead-lettered; a repeat after a crash is stored once (sessions deduplicate by eventId). Records
 * that cannot be recorded go to {@code topics.dead-letter} with the original key, value and
 * headers plus {@code otl-error} (reason, naming the field), {@code otl-error-code} and {@code
 * otl-source} ({@code topic/partition/offset}). Codes: {@code not_json}, {@code not_an_object},
 * {@code invalid_session_id}, {@code invalid_agent_id}, {@code session_mismatch} (key is not the
 * value's sessionId), {@code invalid_event} (unknown type or field, wrong JSON type), and the
 * session's own refusals {@code invalid}, {@code conflict}, {@code not_found}. A journal timeout
 * is not a bad record: the stream restarts from the last committed offset.
 *
 * <h2>trajectories (out)</h2>
 * Key = sessionId; one record per TrajectoryCompleted and RewardRevised; {@code messages} and
 * {@code tools} are exactly the exporter's SFT line of the session (tool calls, tool messages,
 * tools a JSON array), whether or not the trajectory passes the export filters: {@code
 * {"messages":[…],"tools":[…],"reward","quality","qualityScore",
 * "modelVersion","agentId","sessionId","id":"<sessionId>:<eventId>","revision":bool,"status","at"}}.
 *
 * <h2>model-updates (out)</h2>
 * Key = agentId; one record per ModelVersion transition: {@code {"id":"ModelVersion|<agentId>:<seqNr>",
 * "agentId","type","version","at","event":{…},"routing":{"stable","stableEndpoint","stableServedModel",
 * "candidate","candidateEndpoint","candidateServedModel","candidateRatio"}}}, the routing as it was
 * right after the event.
 *
 * <p>Both publishers are at-least-once: consumers deduplicate by {@code id}. Their offsets live in
 * the journal ({@code KafkaOffset|<topic>}).
 */
package io.otl.persistence.kafka;
