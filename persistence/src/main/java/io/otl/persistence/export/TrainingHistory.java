package io.otl.persistence.export;

import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.coordinator.CoordinatorEvents.DatasetExported;
import io.otl.core.model.ModelVersion;
import io.otl.persistence.JournalRows;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * What a continual job builds on, read from the agent's own journals (two small entities, one
 * query each per job): the trajectories earlier jobs exported, and the checkpoint of the current
 * stable version.
 */
final class TrainingHistory {
  private TrainingHistory() {}

  /**
   * The trajectories earlier jobs of the agent trained on (every job but {@code jobId}), each with
   * the time its first export was recorded: a trajectory's age for the replay weights. Times come
   * from the journal, so a repeated export of the same job sees the same candidates and ages.
   */
  static CompletionStage<List<ReplaySampler.Candidate>> trainedBefore(
      ActorSystem<?> system, JournalRows rows, String agentId, String jobId) {
    String pid = PersistenceId.of(TrainingCoordinator.ENTITY_TYPE_KEY.name(), agentId).id();
    return rows.events(pid, 1)
        .map(env -> env.event())
        .runWith(Sink.fold(new LinkedHashMap<String, Instant>(), (seen, e) -> {
          if (e instanceof DatasetExported d && !d.jobId().equals(jobId) && d.manifest() != null) {
            d.manifest().sessionIds().forEach(id -> seen.putIfAbsent(id, d.at()));
          }
          return seen;
        }), system)
        .thenApply(seen -> {
          List<ReplaySampler.Candidate> out = new ArrayList<>(seen.size());
          for (Map.Entry<String, Instant> e : seen.entrySet()) out.add(new ReplaySampler.Candidate(e.getKey(), e.getValue()));
          return List.copyOf(out);
        });
  }

  /** The stable version of the agent and its artifact, when it has one. */
  record Stable(String version, String artifact, String sourceJobId) {}

  static CompletionStage<Optional<Stable>> stable(ActorSystem<?> system, JournalRows rows, String agentId) {
    String pid = PersistenceId.of(ModelVersion.ENTITY_TYPE_KEY.name(), agentId).id();
    return rows.events(pid, 1)
        .map(env -> (ModelVersion.Event) env.event())
        .runWith(Sink.fold(ModelVersion.initialState(), ModelVersion::applyEvent), system)
        .thenApply(state -> {
          String stable = state.models().stable();
          if (stable == null) return Optional.<Stable>empty();
          return state.models().versions().stream()
              .filter(v -> v.version().equals(stable))
              .findFirst()
              .map(v -> new Stable(v.version(), v.artifact(), v.sourceJobId()));
        });
  }
}
