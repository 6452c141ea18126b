package io.otl.persistence.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.session.AgentSession;
import io.otl.core.session.AgentSession.SessionStarted;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Trial t113: an AgentScope agent whose model calls the gateway, with the hook on the same session. The
 * hook stores the tool list, then the gateway stores the same list and its own {@code source}: the
 * timeline read "metadata added: servedModel, source" and "metadata added: tools", changes that were none
 * (the tools) or were no addition (the source).
 */
class TimelineLaterStartTest {
  private static final Instant AT = Instant.parse("2025-06-01T10:00:00Z");
  private static final String TOOLS = "[{\"type\":\"function\",\"function\":{\"name\":\"lookup_order\"}}]";

  private static AgentSession.State hookSession() {
    Map<String, String> start = new LinkedHashMap<>();
    start.put("source", "agentscope");
    start.put("agentName", "gw-bot");
    return AgentSession.State.empty()
        .apply(new SessionStarted("as-start", AT, AT, "gw-bot", null, null, start))
        .apply(new SessionStarted("as-tools-x", AT, AT, "gw-bot", null, null, Map.of("tools", TOOLS)));
  }

  @Test
  void aKeyAlreadyThereWithAnotherValueIsChangedNotAdded() {
    Map<String, String> gateway = new LinkedHashMap<>();
    gateway.put("source", "gateway");
    gateway.put("servedModel", "qwen");
    assertEquals("metadata added: servedModel; metadata changed: source; model version now v0",
        Timeline.laterStart(hookSession(), new SessionStarted("gw:start", AT, AT, "gw-bot", null, "v0", gateway)));
  }

  @Test
  void theSameValueSentAgainChangesNothing() {
    assertEquals("started again, nothing changed (metadata sent again: tools)",
        Timeline.laterStart(hookSession(), new SessionStarted("gw:tools:1", AT, AT, "gw-bot", null, null, Map.of("tools", TOOLS))));
  }

  @Test
  void aNewKeyIsAdded() {
    assertEquals("metadata added: channel",
        Timeline.laterStart(hookSession(), new SessionStarted("s2", AT, AT, "gw-bot", null, null, Map.of("channel", "web"))));
  }
}
