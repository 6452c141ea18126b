package io.otl.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class IdsTest {
  @Test
  void aVersionIsOneToHundredTwentyEightCharactersAndMayCarryBuildMetadata() {
    for (String ok : new String[] {"v1", "proxy-3", "1.2.0+lora", "a:b_c.d-e", "v" + "1".repeat(127)}) {
      assertNull(Ids.versionProblem("version", ok), ok);
    }
    assertEquals("version is required (1-128 characters of [A-Za-z0-9._:+-])", Ids.versionProblem("version", ""));
    assertEquals("version is 129 characters long; at most 128 are allowed",
        Ids.versionProblem("version", "v" + "1".repeat(128)));
    for (String bad : new String[] {"a b", "v/1", "é", "..", "."}) {
      assertTrue(Ids.versionProblem("version", bad) != null, bad);
    }
    String pii = Ids.versionProblem("version", "13800138000");
    assertTrue(pii != null && !pii.contains("13800138000"), pii);
  }

  @Test
  void agentAndSessionIdsKeepTheirDesignLimits() {
    assertTrue(Ids.isValidAgentId("a".repeat(64)));
    assertTrue(!Ids.isValidAgentId("a".repeat(65)));
    assertTrue(Ids.isValidSessionId("s".repeat(128)));
    assertTrue(!Ids.isValidSessionId("s".repeat(129)));
    assertTrue(!Ids.isValidSessionId("1+2"));
  }
}
