package io.otl.persistence.kafka;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.session.AgentSession;
import java.io.UncheckedIOException;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.EventEnvelope;

/**
 * A {@code trajectories} record per completion or reward revision: the trajectory as the journal
 * holds it up to that event (replayed with {@link AgentSession.State#apply}), in the SFT export
 * shape of design §6 ({@code messages} of role and content, {@code tools} as a JSON string) plus
 * {@code reward}, {@code qualityScore}, {@code modelVersion}, {@code agentId}, {@code sessionId},
 * {@code revision} (true for a reward revision), {@code at} and {@code id} =
 * {@code sessionId:eventId}, stable across re-publication.
 *
 * <p>{@code tools} lists the tools the trajectory called, as OpenAI-style function entries with
 * their name only ({@code [{"type":"function","function":{"name":"search"}}]}): the journal does
 * not hold tool schemas.
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
        .runFold(AgentSession.State.empty(), (state, e) -> state.apply((AgentSession.Event) e.event()), system)
        .thenApply(state -> Optional.of(new ProducerRecord<>(topic, sessionId,
            json(sessionId, (AgentSession.Event) event, state))))
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

  public static String json(String sessionId, AgentSession.Event event, AgentSession.State state) {
    ObjectNode out = PublishedJson.MAPPER.createObjectNode();
    ArrayNode messages = out.putArray("messages");
    for (AgentSession.MessageRecorded m : state.messages()) {
      if (io.otl.persistence.export.Trajectory.Builder.gatewayBookkeeping(m)) continue;
      messages.addObject().put("role", m.role().name()).put("content", m.content());
    }
    Set<String> toolNames = new LinkedHashSet<>();
    for (AgentSession.ToolCallRecorded t : state.toolCalls()) toolNames.add(t.toolName());
    ArrayNode tools = PublishedJson.MAPPER.createArrayNode();
    for (String name : toolNames) tools.addObject().put("type", "function").putObject("function").put("name", name);
    out.put("tools", tools.toString());
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
