package io.otl.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The one rule the coordinator, the model versions and the audit share for run-time overrides a
 * later file refuses: the file's settings are in force, and the refusal is heard (the entities log it).
 */
class SettingsOverlayInForceTest {
  /** A file that takes min-samples up to 100 only (as if lowered since the override was accepted). */
  private static final SettingsOverlay.Resolver<Integer> FILE = overrides -> {
    Object v = overrides.getOrDefault("trigger.min-samples", 1000);
    int n = ((Number) v).intValue();
    if (n > 100 && overrides.containsKey("trigger.min-samples")) {
      throw new IllegalArgumentException("trigger.min-samples: must be at most 100");
    }
    return n;
  };

  @Test
  void overridesTheFileTakesAreInForce() {
    List<IllegalArgumentException> heard = new ArrayList<>();
    assertEquals(30, SettingsOverlay.inForce(FILE, Map.of("trigger.min-samples", 30), heard::add));
    assertTrue(heard.isEmpty());
  }

  @Test
  void overridesTheFileNowRefusesLeaveTheFilesSettingsAndAreHeard() {
    List<IllegalArgumentException> heard = new ArrayList<>();
    assertEquals(1000, SettingsOverlay.inForce(FILE, Map.of("trigger.min-samples", 500), heard::add));
    assertEquals(1, heard.size());
    assertEquals("trigger.min-samples: must be at most 100", heard.get(0).getMessage());
  }
}
