package io.otl.core.model;

import io.otl.core.model.ModelEvents.Event;
import io.otl.core.model.ModelEvents.TransitionEvent;
import io.otl.core.model.ModelState.State;
import io.otl.core.model.ModelState.VersionRecord;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.pekko.actor.typed.eventstream.EventStream;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.slf4j.Logger;

/**
 * One INFO line per model version a write moved (docs/operations.md "Logs": one line per event that
 * matters, with ids): registrations, rollout steps, promotions and rollbacks were journaled without a
 * log line, so an operator reading the log could not tell when traffic moved. Ids, states, ratio and
 * event names only: no artifact, endpoint or reason text (free text sent by clients).
 */
final class TransitionLog {
  private TransitionLog() {}

  /** Logs the write's transitions and publishes them ({@link TransitionsPersisted}) on the event stream. */
  static void log(ActorContext<?> context, String agentId, List<? extends Event> events, State after) {
    List<TransitionEvent> transitions = new ArrayList<>();
    for (Event e : events) {
      if (e instanceof TransitionEvent t) transitions.add(t);
    }
    log(context.getLog(), agentId, events, after);
    if (!transitions.isEmpty()) {
      context.getSystem().eventStream().tell(new EventStream.Publish<>(new TransitionsPersisted(agentId, transitions)));
    }
  }

  static void log(Logger log, String agentId, List<? extends Event> events, State after) {
    Map<String, List<String>> byVersion = new LinkedHashMap<>();
    for (Event e : events) {
      if (e instanceof TransitionEvent t) {
        byVersion.computeIfAbsent(t.version(), v -> new ArrayList<>()).add(e.getClass().getSimpleName());
      }
      // The other version such an event moves: the stable a promotion retires, the one a rollback of
      // the stable restores (trial t149: neither had a line, so the log never said when it stopped or
      // started serving again).
      String other = e instanceof ModelEvents.VersionPromoted p ? p.previousStable()
          : e instanceof ModelEvents.VersionRolledBack r ? r.restoredStable() : null;
      if (other != null) {
        byVersion.computeIfAbsent(other, v -> new ArrayList<>()).add(e.getClass().getSimpleName());
      }
    }
    byVersion.forEach((version, names) -> {
      Optional<VersionRecord> v = after.models().find(version);
      String state = v.map(r -> r.state() + " at ratio " + ModelViews.ratioOf(after, r)).orElse("(unknown)");
      log.info("agent {}: model version {} {} ({})", agentId, version, state, String.join(", ", names));
    });
  }
}
