package io.otl.persistence.export;

import io.otl.core.model.ModelEvents.VersionRolledBack;
import io.otl.core.model.ModelVersion;
import io.otl.persistence.JournalRows;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.stream.javadsl.Sink;

/**
 * The model versions of one agent that were ever rolled back, read from that agent's ModelVersion
 * journal (one small entity per agent, so one cheap query per export). Sessions those versions
 * served never enter SFT and are never a DPO {@code chosen} answer (design §6).
 */
final class RolledBackVersions {
  private RolledBackVersions() {}

  static CompletionStage<Set<String>> of(ActorSystem<?> system, JournalRows rows, String agentId) {
    String pid = PersistenceId.of(ModelVersion.ENTITY_TYPE_KEY.name(), agentId).id();
    return rows.events(pid, 1)
        .map(env -> env.event())
        .runWith(Sink.fold(new HashSet<String>(), (set, e) -> {
          if (e instanceof VersionRolledBack r) set.add(r.version());
          return set;
        }), system)
        .thenApply(Set::copyOf);
  }
}
