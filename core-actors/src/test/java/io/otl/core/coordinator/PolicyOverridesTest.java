package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.SettingsOverlay;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * {@link PolicyOverrides}: which training-runner keys one agent may set (design §8, docs and
 * {@code PUT /v1/training/{agentId}/policy}), how a run-time change is flattened and checked, and
 * the settings GET .../policy shows.
 */
class PolicyOverridesTest {
  private static final Config TRAINING = ConfigFactory.defaultReference().getConfig("agentscope.training");

  @Test
  void onlyTheTriggerAlgorithmBaseModelAndHyperparameterKeysAreOverridable() {
    for (String k : List.of("trigger.type", "trigger.cron", "trigger.min-samples", "trigger.missed-slots",
        "trigger.zone", "algorithm", "base-model", "hyperparams.epochs", "hyperparams.reward-fn-type")) {
      assertTrue(PolicyOverrides.overridable(k), k);
    }
    for (String k : List.of("backend", "poll-interval", "min-quality", "hyperparams", "hyperparams.",
        "trigger", "trigger.min-samples.x", "algorithms")) {
      assertFalse(PolicyOverrides.overridable(k), k);
    }
    assertEquals("trigger.type, trigger.cron, trigger.min-samples, trigger.missed-slots, trigger.zone, algorithm, "
        + "base-model, hyperparams.*, model-update.*", PolicyOverrides.allowed());
  }

  @Test
  void nestedSectionsAreFlattenedToKeys() {
    Map<String, Object> raw = new LinkedHashMap<>();
    raw.put("trigger", Map.of("min-samples", 5));
    raw.put("hyperparams.epochs", 2);
    Map<String, Object> flat = PolicyOverrides.flatten(raw);
    assertEquals(Map.of("trigger.min-samples", 5, "hyperparams.epochs", 2), flat);
    assertEquals(Map.of(), PolicyOverrides.flatten(null));
  }

  @Test
  void aKeyThatMayNotBeSetOrANullValueIsRefusedNamingIt() {
    String notAllowed = assertThrows(IllegalArgumentException.class,
        () -> PolicyOverrides.flatten(Map.of("backend", "trinity-proxy"))).getMessage();
    assertTrue(notAllowed.contains("cannot be set per agent; allowed: trigger.type"), notAllowed);
    Map<String, Object> withNull = new HashMap<>();
    withNull.put("base-model", null);
    String nullValue = assertThrows(IllegalArgumentException.class, () -> PolicyOverrides.flatten(withNull))
        .getMessage();
    assertTrue(nullValue.contains("must have a value (null is not one)"), nullValue);
    String badPath = assertThrows(IllegalArgumentException.class,
        () -> PolicyOverrides.flatten(Map.of("trigger..type", "manual"))).getMessage();
    assertTrue(badPath.startsWith("a key of the policy is not a key name"), badPath);
  }

  @Test
  void overridesAreLaidOverTheAgentsSectionAndValidatedFirst() {
    AtomicReference<Config> validated = new AtomicReference<>();
    SettingsOverlay.Resolver<TrainingPolicy> r = PolicyOverrides.over(TRAINING, validated::set);
    TrainingPolicy p = r.resolve(Map.of("trigger.min-samples", 7, "hyperparams.epochs", 3));
    assertEquals(7, p.minSamples());
    assertEquals(3, p.hyperparams().get("epochs"));
    assertEquals(16, p.hyperparams().get("batch-size"), "keys not overridden keep the file's values");
    assertEquals(7, validated.get().getInt("training-runner.trigger.min-samples"));

    validated.set(null);
    assertEquals(1000, r.resolve(Map.of()).minSamples(), "no overrides: the file's policy, nothing to validate");
    assertEquals(null, validated.get());

    SettingsOverlay.Resolver<TrainingPolicy> refusing = PolicyOverrides.over(TRAINING, c -> {
      throw new IllegalArgumentException("refused by the validator");
    });
    assertThrows(IllegalArgumentException.class, () -> refusing.resolve(Map.of("algorithm", "dpo")));
    assertEquals("dpo", PolicyOverrides.over(TRAINING, null).resolve(Map.of("algorithm", "dpo")).algorithm());
  }

  @Test
  void aFixedPolicyRefusesEveryRunTimeChange() {
    TrainingPolicy defaults = TrainingPolicy.defaults();
    SettingsOverlay.Resolver<TrainingPolicy> fixed = PolicyOverrides.fixed(defaults);
    assertSame(defaults, fixed.resolve(Map.of()));
    assertThrows(IllegalArgumentException.class, () -> fixed.resolve(Map.of("algorithm", "dpo")));
  }

  @Test
  void theEffectiveSettingsAreShownByKey() {
    TrainingPolicy p = PolicyOverrides.over(TRAINING, null).resolve(Map.of("trigger.type", "scheduled,manual",
        "trigger.zone", "Europe/Paris", "trigger.missed-slots", "skip"));
    Map<String, Object> shown = PolicyOverrides.effective(p);
    assertEquals(List.of("scheduled", "manual"), shown.get("trigger.type"));
    assertEquals("0 0 2 * * ?", shown.get("trigger.cron"));
    assertEquals(1000, shown.get("trigger.min-samples"));
    assertEquals("skip", shown.get("trigger.missed-slots"));
    assertEquals("Europe/Paris", shown.get("trigger.zone"));
    assertEquals("sft", shown.get("algorithm"));
    assertEquals("qwen2.5-7b-instruct", shown.get("base-model"));
    assertEquals(2e-5, shown.get("hyperparams.learning-rate"));
    assertTrue(p.isEnabled(TriggerType.SCHEDULED));
    assertFalse(p.isEnabled(TriggerType.THRESHOLD));

    TrainingPolicy noCron = TrainingPolicy.fromConfig(ConfigFactory.parseString(
        "training-runner.trigger { type = threshold, cron = \"\" }").withFallback(TRAINING));
    assertEquals("", PolicyOverrides.effective(noCron).get("trigger.cron"));
  }
}
