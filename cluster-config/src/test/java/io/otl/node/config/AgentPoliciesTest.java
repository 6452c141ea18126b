package io.otl.node.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.coordinator.TrainingPolicy;
import io.otl.core.model.Metric;
import io.otl.core.model.ModelSettings;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** agentscope.training.agents.<agentId> { … }: overrides per agent, validated at start-up like the file. */
class AgentPoliciesTest {

  private static Config resolve(String hocon) {
    return NodeConfig.resolve(Optional.empty(), ConfigFactory.parseString(hocon), Map.of());
  }

  private static String error(String hocon) {
    return assertThrows(ConfigValidationException.class, () -> resolve(hocon)).getMessage();
  }

  @Test
  void anAgentsOverridesReplaceOnlyItsOwnKeys() {
    Config root = resolve("""
        agentscope.training.agents.support-bot { trigger.min-samples = 50, base-model = "qwen-small", algorithm = dpo,
          hyperparams.epochs = 1 }""");
    Config training = root.getConfig("agentscope.training");
    Config overrides = AgentPolicies.overrides(root).get("support-bot");
    TrainingPolicy bot = TrainingPolicy.fromConfig(AgentPolicies.effectiveTraining(training, overrides));
    TrainingPolicy everyone = TrainingPolicy.fromConfig(training);
    assertEquals(50, bot.minSamples());
    assertEquals("qwen-small", bot.baseModel());
    assertEquals("dpo", bot.algorithm());
    assertEquals(1000, everyone.minSamples());
    assertEquals("sft", everyone.algorithm());
    assertEquals(everyone.backend(), bot.backend());
    assertEquals(Map.of("support-bot", overrides), AgentPolicies.overrides(root));
  }

  /**
   * An agent's own cron with day numbers is told at start-up as the node-wide one is (review t144: only
   * training-runner.trigger.cron was, so an agent's "1-5" fired SUN-THU without a word); an agent that keeps
   * the node's cron adds nothing.
   */
  @Test
  void anAgentsOwnCronWithDayNumbersIsToldWhichDaysTheyName() {
    java.util.List<String> warnings = AgentPolicies.validate(resolve("""
        agentscope.training.agents.support-bot { trigger.type = scheduled, trigger.cron = "0 0 2 * * 1-5" }
        agentscope.training.agents.other-bot { trigger.min-samples = 50 }"""));
    assertEquals(1, warnings.size(), warnings.toString());
    assertTrue(warnings.get(0).startsWith("agentscope.training.agents.support-bot.trigger.cron = \"0 0 2 * * 1-5\": "
        + "fires on SUN-THU: day-of-week numbers count as in Quartz"), warnings.get(0));
    assertTrue(AgentPolicies.validate(resolve(
        "agentscope.training.agents.support-bot { trigger.cron = \"0 0 2 ? * MON-FRI\" }")).isEmpty());
  }

  @Test
  void aNodeWideOrUnknownKeyIsRefusedNamingTheKeyAndWhatIsAllowed() {
    String m = error("agentscope.training.agents.bot-1 { backend = trinity-proxy }");
    assertTrue(m.contains("agentscope.training.agents.bot-1.backend cannot be set per agent"), m);
    assertTrue(m.contains("allowed: trigger.type,") && m.contains("hyperparams.*"), m);
    m = error("agentscope.training.agents.bot-1 { sft-min-reward = 0.9 }");
    assertTrue(m.contains("agents.bot-1.sft-min-reward cannot be set per agent"), m);
  }

  @Test
  void anUnknownHyperparameterOfAnAgentStopsTheNodeNamingTheAgentsKey() {
    String m = error("agentscope.training.agents.bot-3 { hyperparams.lerning-rate = 1e-5 }");
    assertTrue(m.contains("agentscope.training.agents.bot-3.hyperparams.lerning-rate: not a hyperparameter"), m);
    assertTrue(m.contains("did you mean learning-rate?") && m.contains("known: learning-rate,"), m);
  }

  @Test
  void aBadValueIsRefusedNamingTheAgentsKey() {
    String m = error("agentscope.training.agents.bot-2 { trigger.min-samples = -3 }");
    assertTrue(m.contains("agentscope.training.agents.bot-2.trigger.min-samples"), m);
    m = error("agentscope.training.agents.bot-2 { trigger.type = sometimes }");
    assertTrue(m.contains("agentscope.training.agents.bot-2.trigger.type"), m);
    m = error("agentscope.training.agents { \"bad id!\" { algorithm = sft } }");
    assertTrue(m.contains("not a valid agent id"), m);
    m = error("agentscope.training.agents.bot-3 = 5");
    assertTrue(m.contains("agents.bot-3 must be a section"), m);
  }

  @Test
  void modelUpdateKeysAreOverriddenPerAgentAndValidatedLikeTheFile() {
    Config root = resolve("""
        agentscope.training.agents.canary-bot { trigger.min-samples = 20,
          model-update { canary-ratio = 0.1, auto-deploy = false, evaluation-metrics = [task-success-rate] } }""");
    Map<String, Config> perAgent = AgentPolicies.modelUpdateTraining(root);
    assertEquals(java.util.Set.of("canary-bot"), perAgent.keySet(), "only agents that override model-update keys");
    ModelSettings bot = ModelSettings.fromConfig(perAgent.get("canary-bot"));
    ModelSettings everyone = ModelSettings.fromConfig(root.getConfig("agentscope.training"));
    assertEquals(0.1, bot.canaryRatio());
    assertFalse(bot.autoDeploy());
    assertEquals(java.util.List.of(Metric.TASK_SUCCESS_RATE), bot.evaluationMetrics());
    assertEquals(everyone.stepDuration(), bot.stepDuration(), "keys not overridden come from the file");
    assertTrue(everyone.canaryRatio() != 0.1 && everyone.autoDeploy());
    // The training-runner overrides do not carry the model-update section.
    Config runner = AgentPolicies.overrides(root).get("canary-bot");
    assertFalse(runner.hasPath("model-update"), runner.toString());
    assertEquals(20, TrainingPolicy.fromConfig(
        AgentPolicies.effectiveTraining(root.getConfig("agentscope.training"), runner)).minSamples());

    String m = error("agentscope.training.agents.bot-4 { model-update.canary-ratio = 1 }");
    assertTrue(m.contains("agentscope.training.agents.bot-4.model-update.canary-ratio = 1"), m);
    m = error("agentscope.training.agents.bot-4 { model-update.canary-size = 0.1 }");
    assertTrue(m.contains("agents.bot-4.model-update.canary-size is not a model-update key; known:")
        && m.contains("canary-ratio"), m);
    // Checked across keys as the entity would: too few samples per step for the confidence asked.
    m = error("agentscope.training.agents.bot-4 { model-update.min-samples-per-step = 1 }");
    assertTrue(m.contains("agentscope.training.agents.bot-4.model-update.min-samples-per-step = 1 is not allowed"), m);
  }
}
