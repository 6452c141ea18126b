package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.MissedSlots;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import java.time.Duration;
import java.time.ZoneId;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link TrainingPolicy}'s bounds on both sides (reference.conf's comments: min-samples >= 1,
 * min-quality and warmup-ratio in [0, 1], learning-rate > 0, durations > 0, max-backoff >=
 * min-backoff), the forms a trigger list may take, and the master switch.
 */
class TrainingPolicyBoundsTest {

  private static TrainingPolicy parse(String overrides) {
    return StepsHarness.policy(overrides);
  }

  private static String error(String overrides) {
    return assertThrows(IllegalArgumentException.class, () -> parse(overrides)).getMessage();
  }

  @Test
  void theBoundsThemselvesAreAllowed() {
    assertEquals(1, parse("trigger.min-samples = 1").minSamples());
    assertEquals(0.0, parse("min-quality = 0").minQuality());
    assertEquals(1.0, parse("min-quality = 1").minQuality());
    assertEquals(0.0, parse("hyperparams.warmup-ratio = 0").hyperparams().get("warmup-ratio"));
    assertEquals(1.0, parse("hyperparams.warmup-ratio = 1").hyperparams().get("warmup-ratio"));
    assertEquals(1, parse("hyperparams { batch-size = 1, epochs = 1 }").hyperparams().get("epochs"));
    assertDoesNotThrow(() -> parse("submit-retry { min-backoff = 3s, max-backoff = 3s }"));
  }

  @Test
  void justOutsideTheBoundsIsRefused() {
    assertTrue(error("min-quality = -0.01").contains("min-quality = -0.01: must be a number in [0, 1]"));
    assertTrue(error("hyperparams.warmup-ratio = 1.01").contains("hyperparams.warmup-ratio"));
    assertTrue(error("hyperparams.warmup-ratio = -0.1").contains("hyperparams.warmup-ratio"));
    assertTrue(error("hyperparams.epochs = 0").contains("hyperparams.epochs = 0: must be an integer >= 1"));
    assertTrue(error("hyperparams.learning-rate = 0").contains("hyperparams.learning-rate = 0.0: must be a number > 0"));
    assertTrue(error("submit-retry.min-backoff = 0s").contains("submit-retry.min-backoff"));
    assertTrue(error("poll-interval = -1s").contains("poll-interval"));
    assertTrue(error("trigger.type = 3").contains("one, a list or a comma-separated string"));
    assertTrue(error("trigger.type = \" , \"").contains("trigger.type"));
  }

  @Test
  void namesAreTrimmedAndCaseDoesNotMatter() {
    assertEquals(EnumSet.of(TriggerType.THRESHOLD, TriggerType.MANUAL),
        parse("trigger.type = \" Threshold,,MANUAL \"").triggers());
    assertEquals(MissedSlots.SKIP, parse("trigger.missed-slots = \" SKIP \"").missedSlots());
    assertEquals(ZoneId.of("Europe/Paris"), parse("trigger.zone = \" Europe/Paris \"").zone());
    assertEquals("grpo", parse("algorithm = \" grpo \"").algorithm());
    assertEquals("m", parse("base-model = \" m \"").baseModel());
    assertEquals(Backend.TRINITY_PROXY, parse("backend = trinity-proxy").backend());
    assertEquals("/data/datasets", parse("dataset-dir = /data/datasets").datasetDir());
    assertEquals("trinity-proxy", Backend.TRINITY_PROXY.configName());
  }

  @Test
  void furtherHyperparametersFollowTheFourKnownOnesInConfigOrder() {
    Map<String, Object> h = parse("hyperparams { reward-fn-type = judge, epochs = 3 }").hyperparams();
    assertEquals(List.of("learning-rate", "batch-size", "epochs", "warmup-ratio", "reward-fn-type"),
        List.copyOf(h.keySet()));
    assertEquals(3, h.get("epochs"));
    assertEquals("judge", h.get("reward-fn-type"));
  }

  @Test
  void theMasterSwitchTurnsEveryTriggerOff() {
    TrainingPolicy off = TrainingPolicy.fromConfig(ConfigFactory.parseString("enabled = false")
        .withFallback(StepsHarness.config("trigger.type = [threshold, scheduled]")));
    assertFalse(off.trainingEnabled());
    assertFalse(off.isEnabled(TriggerType.MANUAL));
    assertFalse(off.isEnabled(TriggerType.THRESHOLD));
    assertEquals("disabled", TrainingSwitch.status(off));
    TrainingPolicy on = parse("trigger.type = [threshold]");
    assertTrue(on.trainingEnabled());
    assertFalse(on.isEnabled(TriggerType.SCHEDULED));
    assertTrue(on.isEnabled(TriggerType.THRESHOLD));
  }

  @Test
  void theConstructorFillsDefaultsAndChecksWhatTheFileWouldCheck() {
    TrainingPolicy d = TrainingPolicy.defaults();
    TrainingPolicy built = new TrainingPolicy(Backend.RAY_JOBS, null, EnumSet.of(TriggerType.MANUAL), null, null, 5,
        MissedSlots.FIRE, "sft", null, null, 0.5, null, null, d.pollInterval(), d.submitMinBackoff(),
        d.submitMaxBackoff(), true, 1, 1);
    assertEquals("", built.trinityEndpoint());
    assertEquals(ZoneId.of("UTC"), built.zone());
    assertEquals("", built.baseModel());
    assertEquals(Map.of(), built.hyperparams());
    assertEquals("", built.datasetDir());
    assertEquals("", built.checkpointRootDir());
    assertNull(built.cron());
    assertThrows(IllegalArgumentException.class, () -> new TrainingPolicy(Backend.RAY_JOBS, "", EnumSet.of(
        TriggerType.SCHEDULED), null, null, 5, MissedSlots.FIRE, "sft", "m", null, 0.5, "", "", d.pollInterval(),
        d.submitMinBackoff(), d.submitMaxBackoff(), true, 1, 1), "scheduled needs a cron");
    assertThrows(IllegalArgumentException.class, () -> new TrainingPolicy(Backend.RAY_JOBS, "", null, null, null, 5,
        MissedSlots.FIRE, "sft", "m", null, 0.5, "", "", d.pollInterval(), d.submitMinBackoff(), d.submitMaxBackoff(),
        true, 1, 1));
    assertThrows(IllegalArgumentException.class, () -> new TrainingPolicy(Backend.RAY_JOBS, "", EnumSet.of(
        TriggerType.MANUAL), null, null, 5, MissedSlots.FIRE, "sft", "m", null, 0.5, "", "", d.pollInterval(),
        Duration.ofSeconds(10), Duration.ofSeconds(9), true, 1, 1), "max-backoff below min-backoff");
  }

  @Test
  void theBackoffDoublesFromTheMinimumUpToTheCap() {
    TrainingPolicy p = parse("submit-retry { min-backoff = 1s, max-backoff = 6s }");
    assertEquals(Duration.ofSeconds(1), p.backoff(0));
    assertEquals(Duration.ofSeconds(4), p.backoff(3));
    assertEquals(Duration.ofSeconds(6), p.backoff(4), "8 s is capped at 6 s");
    TrainingPolicy flat = parse("submit-retry { min-backoff = 5s, max-backoff = 5s }");
    assertEquals(Duration.ofSeconds(5), flat.backoff(3));
  }
}
