package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import org.junit.jupiter.api.Test;

class TrainingPolicyTest {

  private static TrainingPolicy parse(String overrides) {
    return TrainingPolicy.fromConfig(ConfigFactory.parseString("training-runner { " + overrides + " }")
        .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training")));
  }

  private static String error(String overrides) {
    return assertThrows(IllegalArgumentException.class, () -> parse(overrides)).getMessage();
  }

  @Test
  void defaultsFromReferenceConf() {
    TrainingPolicy p = TrainingPolicy.defaults();
    assertEquals(Backend.RAY_JOBS, p.backend());
    assertEquals(EnumSet.of(TriggerType.THRESHOLD), p.triggers());
    assertEquals(1000, p.minSamples());
    assertEquals(MissedSlots.FIRE, p.missedSlots());
    assertEquals("sft", p.algorithm());
    assertEquals("qwen2.5-7b-instruct", p.baseModel());
    assertEquals(List.of("learning-rate", "batch-size", "epochs", "warmup-ratio"), List.copyOf(p.hyperparams().keySet()));
    assertEquals(2e-5, p.hyperparams().get("learning-rate"));
    assertEquals(16, p.hyperparams().get("batch-size"));
    assertEquals(0.6, p.minQuality());
    assertEquals(Duration.ofSeconds(10), p.pollInterval());
    assertEquals(ZoneId.of("UTC"), p.zone());
    assertEquals("0 0 2 * * ?", p.cron().expression(), "parsed even when scheduled is off");
    assertTrue(p.isEnabled(TriggerType.MANUAL), "manual is always allowed");
    assertEquals(List.of("threshold"), p.triggerNames());
  }

  @Test
  void triggerTypeAcceptsOneAListOrACommaSeparatedString() {
    assertEquals(EnumSet.of(TriggerType.THRESHOLD, TriggerType.SCHEDULED),
        parse("trigger.type = \"threshold, scheduled\"").triggers());
    assertEquals(EnumSet.of(TriggerType.MANUAL, TriggerType.SCHEDULED),
        parse("trigger.type = [manual, scheduled]").triggers());
    assertEquals(List.of("scheduled", "manual"), parse("trigger.type = [manual, scheduled]").triggerNames());
    assertEquals(EnumSet.of(TriggerType.MANUAL), parse("trigger.type = MANUAL").triggers());
  }

  @Test
  void badValuesNameTheKeyTheValueAndWhatIsAllowed() {
    assertEquals("agentscope.training.training-runner.trigger.type: \"weekly\" is not allowed; allowed: "
        + "threshold, scheduled, manual", error("trigger.type = \"threshold,weekly\""));
    assertTrue(error("trigger.type = []").contains("trigger.type"));
    assertEquals("agentscope.training.training-runner.trigger.min-samples = 0: must be an integer >= 1",
        error("trigger.min-samples = 0"));
    assertEquals("agentscope.training.training-runner.trigger.missed-slots = \"later\": must be fire or skip",
        error("trigger.missed-slots = later"));
    assertTrue(error("trigger { type = scheduled, cron = \"0 0 2 * *\" }")
        .startsWith("agentscope.training.training-runner.trigger.cron = \"0 0 2 * *\": "));
    assertTrue(error("trigger.zone = \"Mars/Olympus\"").contains("trigger.zone = \"Mars/Olympus\""));
    assertTrue(error("algorithm = rlhf").contains("algorithm = rlhf: must be one of sft, ppo, grpo, dpo, distillation"));
    assertTrue(error("backend = local").contains("backend = local: must be ray-jobs or trinity-proxy"));
    assertTrue(error("min-quality = 1.5").contains("min-quality = 1.5"));
    assertTrue(error("hyperparams.batch-size = 0").contains("hyperparams.batch-size = 0"));
    assertTrue(error("hyperparams.learning-rate = -1").contains("hyperparams.learning-rate"));
    assertTrue(error("poll-interval = 0s").contains("poll-interval"));
    assertTrue(error("submit-retry { min-backoff = 5s, max-backoff = 1s }").contains("submit-retry.max-backoff"));
    assertTrue(error("trigger.min-samples = many").contains("trigger.min-samples: invalid value"));
  }

  @Test
  void scheduledWithoutAValidCronIsRefusedButAnUnusedBadCronIsIgnored() {
    assertNull(parse("trigger { type = threshold, cron = \"nonsense\" }").cron());
    assertTrue(error("trigger { type = scheduled, cron = \"\" }").contains("trigger.cron"));
  }

  @Test
  void zoneAndBackoff() {
    TrainingPolicy p = parse("trigger.zone = \"Asia/Shanghai\", submit-retry { min-backoff = 1s, max-backoff = 5s }");
    assertEquals(ZoneId.of("Asia/Shanghai"), p.zone());
    assertEquals(Duration.ofSeconds(1), p.backoff(1));
    assertEquals(Duration.ofSeconds(2), p.backoff(2));
    assertEquals(Duration.ofSeconds(4), p.backoff(3));
    assertEquals(Duration.ofSeconds(5), p.backoff(4));
    assertEquals(Duration.ofSeconds(5), p.backoff(60));
  }

  @Test
  void anEmptyBaseModelIsLeftToThePreflight() {
    assertEquals("", parse("base-model = \"\"").baseModel());
  }
}
