package io.otl.node;

import io.otl.core.model.ModelEvents;
import io.otl.core.model.TransitionsPersisted;
import io.otl.http.ApiMetrics;
import io.otl.http.MetricsRegistry;
import java.util.HashSet;
import java.util.Set;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.eventstream.EventStream;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * {@code otl_rollout_events_total{agent,event}}: rollouts started, versions promoted and rolled back, counted
 * as the model version entities on this node persist them. {@code otl_canary_ratio} is a gauge sampled every
 * {@code http.metrics-sample-interval} (so a scrape never waits on the cluster), and a canary rolled back
 * within the interval never showed on {@code /metrics} (operator trial); a counter cannot be missed by a scrape.
 *
 * <p>Agent labels: the first {@code topAgents} agents counted keep their name for good, later ones count as
 * {@code agent="other"}, so a series never moves between labels (a counter must not go down).
 */
final class RolloutCounts {
  static final String NAME = "otl_rollout_events_total";
  private static final String HELP = "Model version transitions persisted on this node, per agent: event=started"
      + " (a candidate's rollout began), promoted (a version became stable), rolled_back";

  private RolloutCounts() {}

  /** Subscribes before the model version entities start, so no transition of this node goes uncounted. */
  static void start(ActorSystem<?> system, ApiMetrics metrics, int topAgents) {
    var counter = system.systemActorOf(counting(metrics.registry(), topAgents), "rollout-counts", Props.empty());
    system.eventStream().tell(new EventStream.Subscribe<>(TransitionsPersisted.class, counter));
  }

  private static Behavior<TransitionsPersisted> counting(MetricsRegistry registry, int topAgents) {
    Set<String> labelled = new HashSet<>();
    return Behaviors.receiveMessage(t -> {
      String agent = labelled.contains(t.agentId()) || labelled.size() < topAgents && labelled.add(t.agentId())
          ? io.otl.core.Ids.shown(t.agentId()) : AgentLabels.OTHER; // an id holding a key: without it
      for (ModelEvents.TransitionEvent e : t.events()) {
        String event = eventOf(e);
        if (event != null) registry.inc(NAME, HELP, MetricsRegistry.labels("agent", agent, "event", event), 1);
      }
      return Behaviors.same();
    });
  }

  private static String eventOf(ModelEvents.TransitionEvent e) {
    if (e instanceof ModelEvents.RolloutStarted) return "started";
    if (e instanceof ModelEvents.VersionPromoted) return "promoted";
    if (e instanceof ModelEvents.VersionRolledBack) return "rolled_back";
    return null;
  }
}
