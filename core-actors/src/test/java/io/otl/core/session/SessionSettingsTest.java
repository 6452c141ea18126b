package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.core.session.SessionModel.Role;
import io.otl.core.session.SessionModel.TaskStatus;
import io.otl.core.session.SessionSettings.RewardWeights;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code data-collector} as documented in reference.conf and design §8, and the session's vocabularies. */
class SessionSettingsTest {
  private static SessionSettings settings(String mode, double rate, int maxText, Duration idle) {
    return new SessionSettings(mode, rate, true, List.of("phone"), List.of(), maxText, idle, Duration.ofDays(1),
        Duration.ofMinutes(2), RewardWeights.defaults());
  }

  @Test
  void theDefaultsAreThoseOfReferenceConf() {
    SessionSettings s = SessionSettings.fromConfig(ConfigFactory.load().getConfig("agentscope.training"));
    assertEquals("full", s.collectMode());
    assertEquals(0.1, s.sampleRate());
    assertTrue(s.desensitizeEnabled());
    assertEquals(List.of("phone", "id_card", "email", "bank_card", "iban", "secret"), s.desensitizePatterns());
    assertEquals(List.of(), s.customPatterns());
    assertEquals(65536, s.maxTextLength());
    assertEquals(Duration.ofMinutes(30), s.idleTimeout());
    assertEquals(Duration.ofHours(24), s.feedbackWindow());
    assertEquals(Duration.ofMinutes(2), s.passivateAfter());
    // design §3.1.1
    assertEquals(RewardWeights.defaults(), s.weights());
    assertEquals(new RewardWeights(1, -1, 1, 0.5, -0.5, -0.5, 1, -1, -0.5), s.weights());
  }

  @Test
  void eachBoundIsCheckedOnBothSides() {
    assertThrows(IllegalArgumentException.class, () -> settings("some", 1, 1, Duration.ofSeconds(1)));
    settings("sampled", 0, 1, Duration.ofSeconds(1));
    settings("full", 1, 1, Duration.ofNanos(1));
    var below = assertThrows(IllegalArgumentException.class, () -> settings("full", -0.01, 1, Duration.ofSeconds(1)));
    assertEquals("data-collector.sample-rate = -0.01: must be a number in [0, 1]", below.getMessage());
    assertThrows(IllegalArgumentException.class, () -> settings("full", 1.01, 1, Duration.ofSeconds(1)));
    assertThrows(IllegalArgumentException.class, () -> settings("full", Double.NaN, 1, Duration.ofSeconds(1)));
    assertThrows(IllegalArgumentException.class, () -> settings("full", 1, 0, Duration.ofSeconds(1)));
    assertThrows(IllegalArgumentException.class, () -> settings("full", 1, 1, Duration.ZERO));
    assertThrows(IllegalArgumentException.class, () -> settings("full", 1, 1, Duration.ofSeconds(-1)));
  }

  @Test
  void thePatternListsAreCopiedAndTheDesensitizerSharedPerConfiguration() {
    List<String> custom = new ArrayList<>(List.of("secret-\\d+"));
    var a = new SessionSettings("full", 1, true, List.of("email"), custom, 10, Duration.ofMinutes(1),
        Duration.ofDays(1), Duration.ofMinutes(2), RewardWeights.defaults());
    custom.add("other");
    assertEquals(List.of("secret-\\d+"), a.customPatterns());
    var b = new SessionSettings("sampled", 0.5, true, List.of("email"), List.of("secret-\\d+"), 99,
        Duration.ofMinutes(9), Duration.ofDays(2), Duration.ofMinutes(3), RewardWeights.defaults());
    assertSame(a.desensitizer(), b.desensitizer(), "same rules, same instance");
    assertEquals("[REDACTED] [EMAIL]", a.desensitizer().apply("secret-1 alice@example.com"));
    var off = new SessionSettings("full", 1, false, List.of("email"), List.of("secret-\\d+"), 10,
        Duration.ofMinutes(1), Duration.ofDays(1), Duration.ofMinutes(2), RewardWeights.defaults());
    assertNotSame(a.desensitizer(), off.desensitizer());
    assertEquals("secret-1", off.desensitizer().apply("secret-1"));
    // The shared instances live as long as the JVM: a configuration no earlier test (or PIT mutant
    // run in the same JVM) can have used shows the first creation too.
    String fresh = "fresh-" + java.util.UUID.randomUUID();
    var first = new SessionSettings("full", 1, true, List.of(), List.of(fresh), 10, Duration.ofMinutes(1),
        Duration.ofDays(1), Duration.ofMinutes(2), RewardWeights.defaults());
    assertEquals("[REDACTED]", first.desensitizer().apply(fresh));
  }

  @Test
  void theSamplerFollowsTheMode() {
    assertTrue(settings("full", 0, 1, Duration.ofSeconds(1)).sampler().keep("any"));
    assertFalse(settings("sampled", 0, 1, Duration.ofSeconds(1)).sampler().keep("any"));
  }

  @Test
  void rolesAndTheOtherWordsAreReadInAnyCase() {
    assertEquals(Role.tool, Role.parse("tool"));
    assertEquals(Role.tool, Role.parse("Tool"));
    assertNull(Role.parse("tools"));
    assertNull(Role.parse(null));
    assertEquals(TaskStatus.TIMEOUT, TaskStatus.parse("Timeout"));
    assertNull(TaskStatus.parse("TIMED_OUT"));
    assertNull(TaskStatus.parse(null));
  }
}
