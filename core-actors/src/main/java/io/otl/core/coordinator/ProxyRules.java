package io.otl.core.coordinator;

import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.ProxyModelObserved;
import io.otl.core.coordinator.CoordinatorEvents.ProxyRestarted;
import io.otl.core.coordinator.CoordinatorState.Job;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.training.ProxyMetrics;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;

/** Pure rules of the trinity-proxy loop: when a commit may go, and what a new proxy model is. */
final class ProxyRules {
  private ProxyRules() {}

  /** A commit releases what the proxy holds: it waits while a reward of the job is not forwarded yet. */
  static boolean commitMustWait(State s, Job job) {
    return job.sessionIds().stream().anyMatch(id -> s.pendingRewards().containsKey(id));
  }

  /**
   * What the proxy's metrics say: a new model version is a candidate ({@link ProxyModelObserved},
   * {@code proxy-<modelVersion>}, attributed to the latest successful commit job); nothing when
   * its model version is the last one seen.
   *
   * <p>A version below the last one seen means the proxy restarted: its {@code model_version}
   * counts from its start again. "Not above the last one" would ignore the new run's weights until
   * it passed the old count, and a repeated number would name the first run's model. So the restart
   * is recorded ({@link ProxyRestarted}, also at 0, the weights it started with), versions count
   * from there, and the new run's versions above 0 are candidates {@code proxy-r<k>-<modelVersion>}
   * after the k-th restart seen.
   */
  static List<Event> observed(State s, ProxyMetrics m, Instant now) {
    int latest = m.latestModelVersion();
    int restarts = s.proxyRestarts();
    List<Event> events = new ArrayList<>(2);
    if (latest < s.proxyModelVersion()) {
      restarts++;
      events.add(new ProxyRestarted(restarts, latest, now));
      if (latest == 0) {
        return events;
      }
    } else if (latest == s.proxyModelVersion()) {
      return events;
    }
    String sourceJob = null;
    for (Job j : s.jobs()) {
      if (j.backend() == Backend.TRINITY_PROXY && j.status() == JobStatus.SUCCEEDED) {
        sourceJob = j.jobId();
      }
    }
    Map<String, Double> metrics = new LinkedHashMap<>();
    metrics.put("model_version", (double) latest);
    metrics.put("total_experience_count", (double) m.totalExperienceCount());
    metrics.put("ready_experience_count", (double) m.readyExperienceCount());
    metrics.put("explore_step_num", (double) m.exploreStepNum());
    String name = restarts == 0 ? "proxy-" + latest : "proxy-r" + restarts + "-" + latest;
    events.add(new ProxyModelObserved(sourceJob, latest, name, metrics, now, restarts));
    return events;
  }
}
