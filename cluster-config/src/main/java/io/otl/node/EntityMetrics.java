package io.otl.node;

import io.otl.core.api.AgentDirectory;
import io.otl.core.api.CachedAgentDirectory;
import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.AgentSession;
import io.otl.http.ApiMetrics;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.cluster.sharding.ShardRegion;
import org.apache.pekko.cluster.sharding.typed.GetShardRegionState;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The domain's gauges on {@code /metrics}: sessions active on this node, pool size, jobs by state
 * and canary ratio per agent. Sampled every {@code interval} by asking the entities through their
 * protocols, so a scrape never waits on the cluster.
 */
final class EntityMetrics {
  private static final Logger log = LoggerFactory.getLogger(EntityMetrics.class);

  private final Map<String, Double> sessionsActive = new ConcurrentHashMap<>();
  /** By agent id; labels are made at scrape time, bounded by {@link AgentLabels}. */
  private final Map<String, Double> poolSize = new ConcurrentHashMap<>();
  private final Map<String, Map<String, Double>> jobsByState = new ConcurrentHashMap<>();
  private final Map<String, Double> canaryRatio = new ConcurrentHashMap<>();

  private static final Duration FIRST_SAMPLE = Duration.ofSeconds(1);
  /**
   * The agents are listed at most every this many samples (a minute at the default 10 s): each listing
   * scans the journal's key index, a cost that grows with every event stored, and it ran three times
   * per sample on every node. A new agent's series appear within that many intervals.
   */
  static final int LISTING_EVERY_SAMPLES = 6;

  private EntityMetrics() {}

  /** @param topAgents agents labelled by name, by pool size; the others are summed as agent="other" */
  static void start(ActorSystem<?> system, ClusterSharding sharding, AgentDirectory agents, ApiMetrics metrics,
      Duration interval, Duration askTimeout, int topAgents) {
    EntityMetrics m = new EntityMetrics();
    AgentDirectory listed = new CachedAgentDirectory(agents, interval.multipliedBy(LISTING_EVERY_SAMPLES),
        System::nanoTime);
    metrics.gauge("otl_sessions_active", "AgentSession entities in memory on this node", () -> Map.copyOf(m.sessionsActive));
    metrics.gauge("otl_training_pool_size", "Trajectories in the training pool, per agent (top agents; the rest"
        + " summed as agent=\"other\")", () -> AgentLabels.labelled(m.poolSize, m.top(topAgents), Double::sum));
    metrics.gauge("otl_jobs", "Training jobs by agent and state (top agents; the rest summed as agent=\"other\")",
        () -> m.jobs(topAgents));
    metrics.gauge("otl_canary_ratio", "Share of sessions routed to the candidate, per agent (agent=\"other\": the"
        + " largest share among the rest)", () -> AgentLabels.labelled(m.canaryRatio, m.top(topAgents), Math::max));
    // The first sample soon after the start, not an interval later: a restarted node's scrape
    // lacked its canaries and jobs for that long (trial t24).
    Duration first = interval.compareTo(FIRST_SAMPLE) < 0 ? interval : FIRST_SAMPLE;
    system.scheduler().scheduleWithFixedDelay(first, interval,
        () -> m.sample(system, sharding, listed, askTimeout), system.executionContext());
  }

  /**
   * The agents labelled by name: those with a candidate in rollout first, then the largest pools, and after
   * them agents with model versions but no coordinator yet (pool 0), so a version registered by hand before
   * any trajectory shows its canary. By pool alone, the one agent in canary among more than
   * {@code metrics-top-agents} with bigger pools was folded into agent="other" (trial t88): its ratio, the
   * figure to watch, had no series of its own.
   */
  private java.util.Set<String> top(int n) {
    Map<String, Double> volume = new HashMap<>(poolSize);
    canaryRatio.keySet().forEach(agent -> volume.putIfAbsent(agent, 0.0));
    java.util.Set<String> out = AgentLabels.top(Map.copyOf(inRollout()), n);
    volume.keySet().removeAll(out);
    out.addAll(AgentLabels.top(volume, n - out.size()));
    return out;
  }

  /** The agents whose candidate has a share of the traffic, by that share. */
  private Map<String, Double> inRollout() {
    Map<String, Double> out = new HashMap<>();
    canaryRatio.forEach((agent, ratio) -> {
      if (ratio > 0) out.put(agent, ratio);
    });
    return out;
  }

  private Map<String, Double> jobs(int topAgents) {
    java.util.Set<String> top = top(topAgents);
    Map<String, Double> out = new HashMap<>();
    for (TrainingCoordinator.JobStatus st : TrainingCoordinator.JobStatus.values()) {
      Map<String, Double> byAgent = new HashMap<>();
      jobsByState.forEach((agent, counts) -> byAgent.put(agent, counts.getOrDefault(st.name(), 0.0)));
      out.putAll(AgentLabels.labelled(byAgent, top, Double::sum, "state", st.name()));
    }
    return out;
  }

  private void sample(ActorSystem<?> system, ClusterSharding sharding, AgentDirectory agents, Duration askTimeout) {
    AskPattern.<GetShardRegionState, ShardRegion.CurrentShardRegionState>ask(sharding.shardState().narrow(),
            reply -> new GetShardRegionState(AgentSession.ENTITY_TYPE_KEY, reply), askTimeout, system.scheduler())
        .thenAccept(state -> {
          int n = 0;
          for (ShardRegion.ShardState s : state.getShards()) n += s.getEntityIds().size();
          sessionsActive.put("", (double) n);
        });
    agents.agentIds().thenAccept(ids -> {
      for (String agent : ids) {
        sharding.entityRefFor(TrainingCoordinator.ENTITY_TYPE_KEY, agent)
            .<TrainingCoordinator.CoordinatorView>ask(TrainingCoordinator.GetStatus::new, askTimeout)
            .thenAccept(v -> poolSize.put(agent, (double) v.poolSize()));
        sharding.entityRefFor(TrainingCoordinator.ENTITY_TYPE_KEY, agent)
            .<TrainingCoordinator.JobList>ask(reply -> new TrainingCoordinator.ListJobs(null, reply), askTimeout)
            .thenAccept(list -> {
              Map<String, Double> counts = new HashMap<>();
              list.jobs().forEach(j -> counts.merge(j.status().name(), 1.0, Double::sum));
              jobsByState.put(agent, counts);
            });
      }
    }).exceptionally(e -> {
      log.debug("metrics sampling failed: {}", e.getMessage());
      return null;
    });
    // The agents with model versions as well as the coordinators' (whose agent may have only its base model,
    // 0): a version registered by hand for an agent with no completed trajectory (no coordinator) canaries
    // too, and its ratio was missing from the scrape.
    agents.knownAgentIds().thenAccept(ids -> {
      for (String agent : ids) {
        sharding.entityRefFor(ModelVersion.ENTITY_TYPE_KEY, agent)
            .<ModelVersion.ModelsView>ask(ModelVersion.Get::new, askTimeout)
            .thenAccept(v -> canaryRatio.put(agent, v.versions().stream()
                .filter(x -> x.version().equals(v.candidate())).mapToDouble(ModelVersion.VersionView::ratio)
                .findFirst().orElse(0.0)));
      }
    }).exceptionally(e -> {
      log.debug("metrics sampling failed: {}", e.getMessage());
      return null;
    });
  }
}
