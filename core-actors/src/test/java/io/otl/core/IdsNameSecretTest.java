package io.otl.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/**
 * A trial named an OpenTelemetry agent "Agent sk-proj-…": the agent id made of the name carried the
 * key whole into the node log (and, for a new session, the journal). A display name holding a key is
 * refused like one holding an e-mail; ids a client chooses stay outside the key check.
 */
class IdsNameSecretTest {
  private static final String KEY = "sk-" + "proj-AbCdEf1234567890GhIjKlMnOpQrStUv";

  @Test
  void aDisplayNameHoldingAKeyMakesNoAgentId() {
    assertEquals("an API key or token", Ids.namePii("Agent " + KEY));
    assertNull(Ids.agentIdFromName("Agent " + KEY));
  }

  @Test
  void ordinaryNamesStillMakeIds() {
    assertEquals("Weather-Agent", Ids.agentIdFromName("Weather Agent"));
    assertEquals("task-based-planner", Ids.agentIdFromName("task-based planner"));
  }
}
