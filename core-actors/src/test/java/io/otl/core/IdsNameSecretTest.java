package io.otl.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
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

  @Test
  void namesBeyondAsciiAreOneAgentEach() {
    // Before trial t102 both were "----": one agent for every four-character Chinese name.
    String a = Ids.agentIdFromName("客服助手");
    String b = Ids.agentIdFromName("销售助手");
    assertTrue(a.matches("agent-[0-9a-f]{10}"), a);
    assertTrue(b.matches("agent-[0-9a-f]{10}"), b);
    assertNotEquals(a, b);
    assertEquals(a, Ids.agentIdFromName("客服助手"), "the same name is the same agent");
    assertTrue(Ids.agentIdFromName("客服-bot").matches("bot-[0-9a-f]{10}"));
    assertNotEquals(Ids.agentIdFromName("\uD83E\uDD16 Support"), Ids.agentIdFromName("\uD83E\uDDBE Support"));
    // Composed é and e + combining accent: one name, one agent.
    assertEquals(Ids.agentIdFromName("Agent caf\u00e9"), Ids.agentIdFromName("Agent cafe\u0301"));
  }

  @Test
  void longNamesDifferingOnlyInTheirNonAsciiPartStayTwoAgents() {
    String common = "Customer Support Agent for Enterprise Clients of the Northern and Eastern Region ";
    String east = Ids.agentIdFromName(common + "华东");
    String south = Ids.agentIdFromName(common + "华南");
    assertNotEquals(east, south, "the id's cut took the digest that tells them apart");
    assertTrue(east.length() <= Ids.MAX_AGENT_ID && Ids.isValidAgentId(east), east);
    assertTrue(Ids.idOfName(common + "华东").length() <= Ids.MAX_AGENT_ID, "an OTLP name is not refused for a length the user never wrote");
  }
}
