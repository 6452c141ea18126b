package io.otl.node.config;

import com.typesafe.config.Config;
import io.otl.core.SettingsOverlay;
import io.otl.core.coordinator.PolicyOverrides;
import io.otl.core.coordinator.TrainingPolicy;
import io.otl.node.trinity.TrinitySettings;
import io.otl.persistence.export.ContinualSettings;
import io.otl.persistence.export.ExportFilters;
import io.otl.persistence.localstore.StoreSettings;
import io.otl.persistence.readside.FeedSettings;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The training loop's settings ({@code agentscope.training.training-runner}, {@code read-side},
 * {@code data-collector.store-*}), read once at start-up: each agent's policy, the backend, where
 * datasets go and how the journal's trajectories reach the coordinators.
 *
 * @param defaults the policy of an agent without a section under {@code agents}
 * @param agents the policy of each agent with one, by agent id
 * @param filters which trajectories a dataset may use
 * @param continual what a job's dataset holds besides the new trajectories
 * @param datasetDir where job datasets are written, as configured (relative to the working directory)
 * @param readSideEnabled whether this node runs the trajectory feed
 */
public record TrainingSettings(
    AgentTraining defaults,
    Map<String, AgentTraining> agents,
    TrinitySettings trinity,
    ExportFilters filters,
    ContinualSettings continual,
    Path datasetDir,
    boolean readSideEnabled,
    FeedSettings feed,
    StoreSettings store) {

  public TrainingSettings {
    agents = Map.copyOf(agents);
  }

  /**
   * One agent's policy and how a run-time change ({@code PUT /v1/training/{agentId}/policy}) becomes
   * its next one. The resolver keeps the agent's configuration section: a run-time change is laid
   * over it and checked by the start-up validator, so it is refused exactly where the file would be.
   */
  public record AgentTraining(TrainingPolicy policy, SettingsOverlay.Resolver<TrainingPolicy> resolver) {
    static AgentTraining of(Config agentscopeTraining) {
      return new AgentTraining(TrainingPolicy.fromConfig(agentscopeTraining),
          PolicyOverrides.over(agentscopeTraining, AgentPolicies::checkRunTime));
    }
  }

  /** These settings with the Trinity part replaced (the endpoint of a simulator on a picked port). */
  public TrainingSettings withTrinity(TrinitySettings trinity) {
    return new TrainingSettings(defaults, agents, trinity, filters, continual, datasetDir, readSideEnabled, feed, store);
  }

  /** The settings of {@code agentId}: its own section's, else the node's. */
  public AgentTraining forAgent(String agentId) {
    return agents.getOrDefault(agentId, defaults);
  }

  /** Reads the node's validated root configuration (call {@link AgentPolicies#validate} first). */
  public static TrainingSettings fromRoot(Config root) {
    Config training = root.getConfig(TrainingSettingsValidator.ROOT);
    Map<String, AgentTraining> agents = new LinkedHashMap<>();
    AgentPolicies.overrides(root).forEach((agentId, overrides) ->
        agents.put(agentId, AgentTraining.of(AgentPolicies.effectiveTraining(training, overrides))));
    return new TrainingSettings(AgentTraining.of(training), agents, TrinitySettings.fromConfig(root),
        ExportFilters.fromRoot(root), continual(root), datasetDir(training),
        training.getBoolean("read-side.enabled"), FeedSettings.fromConfig(training),
        StoreSettings.fromConfig(training));
  }

  /** {@code training-runner.dataset-dir} of an {@code agentscope.training} section: also the export tool's default. */
  public static Path datasetDir(Config training) {
    return Path.of(training.getString("training-runner.dataset-dir"));
  }

  /** The continual-training keys of {@code training-runner}; the defaults where a root has no such section. */
  public static ContinualSettings continual(Config root) {
    String section = TrinitySettings.PATH;
    return root.hasPath(section) ? ContinualSettings.fromConfig(root.getConfig(section)) : ContinualSettings.DEFAULTS;
  }
}
