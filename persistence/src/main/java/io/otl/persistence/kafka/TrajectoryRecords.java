package io.otl.persistence.kafka;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.session.AgentSession;
import io.otl.persistence.export.JsonlFormats;
import io.otl.persistence.export.Trajectory;
import java.io.UncheckedIOException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.EventEnvelope;

/**
 * A {@code trajectories} record per completion or reward revision: the trajectory as the journal
 * holds it up to that event, in the SFT export shape of design §6 exactly as the exporter writes
 * its line ({@code messages} with {@code tool_calls} and {@code tool} messages, consecutive
 * assistant turns merged, {@code tools} a JSON array of definitions; {@link JsonlFormats#sftShape})
 * plus {@code reward}, {@code quality} (design §7.2's name; {@code qualityScore}, the session
 * view's name, carries the same number), {@code modelVersion}, {@code agentId}, {@code
 * sessionId}, {@code revision} (true for a reward revision), {@code status}, {@code at} and {@code
 * id} = {@code sessionId:eventId}, stable across re-publication. Unlike the SFT export, a
 * trajectory without an answer or below the filters is published too (consumers filter).
 */
public final class TrajectoryRecords implements KafkaPublisher.RecordBuilder {
  private static final String PREFIX = AgentSession.ENTITY_TYPE_KEY.name() + "|";

  private final ActorSystem<?> system;
  private final JdbcReadJournal journal;
  private final String topic;

  TrajectoryRecords(ActorSystem<?> system, JdbcReadJournal journal, String topic) {
    this.system = system;
    this.journal = journal;
    this.topic = topic;
  }

  @Override
  public CompletionStage<Optional<ProducerRecord<String, String>>> build(EventEnvelope env) {
    Object event = env.event();
    if (!(event instanceof AgentSession.TrajectoryCompleted || event instanceof AgentSession.RewardRevised)
        || !env.persistenceId().startsWith(PREFIX)) {
      return CompletableFuture.completedFuture(Optional.empty());
    }
    String sessionId = env.persistenceId().substring(PREFIX.length());
    return journal.currentEventsByPersistenceId(env.persistenceId(), 0L, env.sequenceNr())
        .runFold(new Trajectory.Builder(sessionId), (b, e) -> b.add((AgentSession.Event) e.event()), system)
        .thenApply(b -> Optional.of(new ProducerRecord<>(topic, sessionId,
            json(sessionId, (AgentSession.Event) event, b.build()))))
        .exceptionallyCompose(e -> {
          // A stored event that cannot be read (issue #14) must not stop the topic for every later
          // trajectory: this one is not published, and the log says which.
          for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof java.sql.SQLException || c instanceof java.util.concurrent.TimeoutException) {
              return CompletableFuture.failedFuture(e);
            }
          }
          Throwable root = e;
          while (root.getCause() != null && root.getCause() != root) root = root.getCause();
          log.warn("session {}: an event up to seqNr {} cannot be read ({}); its trajectory is not published",
              sessionId, env.sequenceNr(), root.getClass().getSimpleName());
          return CompletableFuture.completedFuture(Optional.<ProducerRecord<String, String>>empty());
        });
  }

  private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(TrajectoryRecords.class);

  /**
   * A trajectory whose record is over the producer's size limit is published without its {@code
   * messages} and {@code tools}, with {@code messagesOmitted} (the full record's size in bytes): its
   * reward, quality and ids still reach consumers, the turns are read from {@code GET
   * /v1/sessions/{id}} or the export, and the trajectories after it are not held back.
   */
  @Override
  public ProducerRecord<String, String> fitted(ProducerRecord<String, String> record, long bytes, long limit) {
    try {
      ObjectNode out = (ObjectNode) PublishedJson.MAPPER.readTree(record.value());
      out.remove("messages");
      out.remove("tools");
      out.put("messagesOmitted", bytes);
      String value = PublishedJson.MAPPER.writeValueAsString(out);
      log.warn("trajectory {} of session {} is {} bytes, over the Kafka producer's max.request.size: published without"
              + " its messages and tools (messagesOmitted); read them with GET /v1/sessions/{}",
          out.path("id").asText(), record.key(), bytes, record.key());
      return new ProducerRecord<>(record.topic(), record.partition(), record.key(), value, record.headers());
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The record of {@code event} (a TrajectoryCompleted or RewardRevised) for the trajectory folded
   * up to it: {@link JsonlFormats#sftShape} (the exporter's SFT line, field for field) plus the
   * fields of the record.
   */
  public static String json(String sessionId, AgentSession.Event event, Trajectory trajectory) {
    ObjectNode out = JsonlFormats.sftShape(trajectory);
    AgentSession.State state = trajectory.state();
    boolean revision = event instanceof AgentSession.RewardRevised;
    double reward = revision ? ((AgentSession.RewardRevised) event).reward()
        : ((AgentSession.TrajectoryCompleted) event).reward();
    double quality = revision ? ((AgentSession.RewardRevised) event).qualityScore()
        : ((AgentSession.TrajectoryCompleted) event).qualityScore();
    String modelVersion = revision ? ((AgentSession.RewardRevised) event).modelVersion()
        : ((AgentSession.TrajectoryCompleted) event).modelVersion();
    String agentId = revision ? ((AgentSession.RewardRevised) event).agentId()
        : ((AgentSession.TrajectoryCompleted) event).agentId();
    out.put("reward", reward);
    out.put("quality", quality);
    out.put("qualityScore", quality);
    out.put("modelVersion", modelVersion);
    out.put("agentId", agentId);
    out.put("sessionId", sessionId);
    out.put("id", sessionId + ":" + event.eventId());
    out.put("revision", revision);
    out.put("status", state.result() == null ? null : state.result().status().name());
    out.put("at", event.at().toString());
    try {
      return PublishedJson.MAPPER.writeValueAsString(out);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }
}
