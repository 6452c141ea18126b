package io.otl.node.config;

import com.typesafe.config.Config;
import io.otl.core.SettingsOverlay;
import io.otl.core.model.ModelSettings;
import io.otl.core.model.RolloutPolicy;
import io.otl.core.session.SessionSettings;
import io.otl.http.HttpSettings;
import io.otl.http.gateway.GatewaySettings;
import io.otl.node.serving.ServingSettings;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.persistence.JournalSettings;
import io.otl.persistence.kafka.KafkaSettings;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Every setting of a node ({@code agentscope.training} and the AgentScope {@code model} section),
 * parsed once at start-up into the typed records the modules own; the node passes these down, so
 * no module reads a key of its own. Each record's {@code fromConfig} is the one place its keys are
 * read; reference.conf holds each key's default and comment, {@link TrainingSettingsValidator}
 * checked the values before they are parsed here. Pekko's own settings ({@code pekko.*}) stay
 * Pekko's to read.
 *
 * @param models the model-update settings of an agent without its own section
 * @param agentModels the model-update settings of each agent with its own section, by agent id
 * @param gateway the inference gateway's settings; empty when HTTP is off (it is served on the API's port)
 * @param simulator the simulator to start with the node, if {@code simulator.enabled}
 * @param model the AgentScope {@code model} section: the base model (v0), if the file has one
 * @param rollouts run-time model-update overrides laid over {@code models}
 * @param agentRollouts the same over each agent's own section, by agent id
 */
public record NodeSettings(
    JournalSettings journal,
    SessionSettings sessions,
    ModelSettings models,
    Map<String, ModelSettings> agentModels,
    TrainingSettings training,
    HttpSettings http,
    Optional<GatewaySettings> gateway,
    KafkaSettings kafka,
    ServingSettings serving,
    Optional<SimulatorSettings> simulator,
    Optional<ModelSection> model,
    SettingsOverlay.Resolver<ModelSettings> rollouts,
    Map<String, SettingsOverlay.Resolver<ModelSettings>> agentRollouts) {

  public NodeSettings {
    agentModels = Map.copyOf(agentModels);
    agentRollouts = Map.copyOf(agentRollouts);
  }

  /** The model-update settings of {@code agentId}'s ModelVersion entity (the file's). */
  public ModelSettings modelsFor(String agentId) {
    return agentModels.getOrDefault(agentId, models);
  }

  /**
   * How {@code agentId}'s ModelVersion lays run-time model-update overrides ({@code PUT …/policy})
   * over the file's settings, checked as the file is.
   */
  public SettingsOverlay.Resolver<ModelSettings> rolloutsFor(String agentId) {
    return agentRollouts.getOrDefault(agentId, rollouts);
  }

  /** Parses a root configuration that {@link NodeConfig#resolve} built and validated. */
  public static NodeSettings from(Config root) {
    Config training = root.getConfig(TrainingSettingsValidator.ROOT);
    HttpSettings http = HttpSettings.fromConfig(training);
    Map<String, ModelSettings> agentModels = new LinkedHashMap<>();
    Map<String, SettingsOverlay.Resolver<ModelSettings>> agentRollouts = new LinkedHashMap<>();
    AgentPolicies.modelUpdateTraining(root).forEach((agentId, t) -> {
      agentModels.put(agentId, ModelSettings.fromConfig(t));
      agentRollouts.put(agentId, RolloutPolicy.over(t, AgentPolicies::checkRunTimeRollout));
    });
    Optional<ModelSection> model = ModelSection.fromRoot(root);
    // The model section's key belongs to its base URL (v0's server): the gateway sends it there only.
    // Its timeout and retries are how its users want that server called, and the gateway is now its client.
    Optional<GatewaySettings> gateway = http.enabled()
        ? Optional.of(model.map(m -> GatewaySettings.fromConfig(training).withEndpointKey(m.baseUrl(), m.apiKey())
                .withServerCalls(m.baseUrl(), Duration.ofSeconds(m.timeoutSeconds()), m.maxRetries()))
            .orElseGet(() -> GatewaySettings.fromConfig(training)))
        : Optional.empty();
    return new NodeSettings(JournalSettings.fromConfig(training), SessionSettings.fromConfig(training),
        ModelSettings.fromConfig(training), agentModels, TrainingSettings.fromRoot(root), http, gateway,
        KafkaSettings.fromConfig(training), ServingSettings.fromConfig(training),
        training.getBoolean("simulator.enabled")
            ? Optional.of(SimulatorSettings.fromConfig(training.getConfig("simulator"))) : Optional.empty(),
        model, RolloutPolicy.over(training, AgentPolicies::checkRunTimeRollout), agentRollouts);
  }
}
