package io.otl.persistence.kafka;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.model.ModelEvents;
import io.otl.core.model.ModelState;
import io.otl.core.model.ModelVersion;
import io.otl.core.model.RoutingTable;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.EventEnvelope;

/**
 * A {@code model-updates} record per ModelVersion transition: {@code id} ({@code
 * persistenceId:sequenceNr}), {@code agentId}, {@code type} (the event's class name), {@code
 * version}, {@code at}, {@code event} (the event as JSON) and {@code routing}, the routing table
 * right after the event (stable and candidate with endpoints, and the candidate's ratio), so a
 * record published late still tells the routing of its moment. The table comes from the entity's
 * own event handler and routing rule applied to the agent's journal up to the event: a consumer
 * sees exactly the routing the gateway applied, with no second implementation to drift from it.
 * Not thread-safe: one per stream run, used with parallelism 1.
 */
final class ModelUpdateRecords implements KafkaPublisher.RecordBuilder {
  private static final String PREFIX = ModelVersion.ENTITY_TYPE_KEY.name() + "|";

  private record Folded(long sequenceNr, ModelState.State state) {}

  private final ActorSystem<?> system;
  private final JdbcReadJournal journal;
  private final String topic;
  private final Map<String, Folded> byPersistenceId = new HashMap<>();

  ModelUpdateRecords(ActorSystem<?> system, JdbcReadJournal journal, String topic) {
    this.system = system;
    this.journal = journal;
    this.topic = topic;
  }

  @Override
  public CompletionStage<Optional<ProducerRecord<String, String>>> build(EventEnvelope env) {
    if (!(env.event() instanceof ModelVersion.TransitionEvent event) || !env.persistenceId().startsWith(PREFIX)) {
      return CompletableFuture.completedFuture(Optional.empty());
    }
    String pid = env.persistenceId();
    String agentId = pid.substring(PREFIX.length());
    Folded known = byPersistenceId.get(pid);
    boolean resume = known != null && known.sequenceNr() < env.sequenceNr();
    long from = resume ? known.sequenceNr() + 1 : 0L;
    ModelState.State start = resume ? known.state() : ModelVersion.initialState();
    return journal.currentEventsByPersistenceId(pid, from, env.sequenceNr())
        .runFold(start, (state, e) -> e.event() instanceof ModelEvents.Event ev ? ModelVersion.applyEvent(state, ev) : state,
            system)
        .thenApply(state -> {
          byPersistenceId.put(pid, new Folded(env.sequenceNr(), state));
          return Optional.of(new ProducerRecord<>(topic, agentId,
              json(pid, env.sequenceNr(), agentId, event, state)));
        });
  }

  static String json(String pid, long sequenceNr, String agentId, ModelVersion.TransitionEvent event,
      ModelState.State state) {
    ObjectNode out = PublishedJson.MAPPER.createObjectNode();
    out.put("id", pid + ":" + sequenceNr);
    out.put("agentId", agentId);
    out.put("type", event.getClass().getSimpleName());
    out.put("version", event.version());
    out.put("at", event.at().toString());
    out.set("event", PublishedJson.MAPPER.valueToTree(event));
    out.set("routing", routingJson(ModelVersion.routingTable(state), state));
    try {
      return PublishedJson.MAPPER.writeValueAsString(out);
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * {@code {"stable","stableEndpoint","stableServedModel","candidate","candidateEndpoint",
   * "candidateServedModel","candidateRatio"}}. The served model names are what tells the versions
   * apart where they share a server: under {@code vllm-lora} (the embedded default) stable and
   * candidate have the same endpoint and differ only by the adapter's name, so a consumer routing
   * by this table without it sent the candidate's share to the stable (trial t72).
   */
  static ObjectNode routingJson(RoutingTable t, ModelState.State state) {
    ObjectNode out = PublishedJson.MAPPER.createObjectNode();
    out.put("stable", t.stableVersion());
    out.put("stableEndpoint", t.stableEndpoint());
    out.put("stableServedModel", ModelVersion.recordedServedModel(state, t.stableVersion()));
    out.put("candidate", t.candidateVersion());
    out.put("candidateEndpoint", t.candidateEndpoint());
    out.put("candidateServedModel", ModelVersion.recordedServedModel(state, t.candidateVersion()));
    out.put("candidateRatio", t.candidateRatio());
    return out;
  }
}
