package io.otl.core.coordinator;

import io.otl.core.coordinator.CoordinatorEvents.ProxyModelObserved;
import io.otl.core.coordinator.CoordinatorState.Job;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.training.ProxyMetrics;
import java.time.Instant;
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
   * The candidate the proxy's metrics announce ({@code proxy-<modelVersion>}, attributed to the
   * latest successful commit job), or null when its model version is not newer than the last one seen.
   *
   * <p>A version below the last one seen means the proxy restarted: its {@code model_version}
   * counts from its start again, so "not above the last one" would ignore every new weights until
   * the new run passed the old count, and a repeated number would name the old run's model. Such a
   * version (above 0: 0 is what the proxy started with, as at a first start) is new weights of a new
   * run, counted in {@code restarts} and named {@code proxy-r<restarts>-<modelVersion>}.
   */
  static ProxyModelObserved observed(State s, ProxyMetrics m, Instant now) {
    int latest = m.latestModelVersion();
    int restarts = s.proxyRestarts();
    if (latest < s.proxyModelVersion()) {
      if (latest == 0) {
        return null;
      }
      restarts++;
    } else if (latest == s.proxyModelVersion()) {
      return null;
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
    return new ProxyModelObserved(sourceJob, latest, name, metrics, now, restarts);
  }
}
