package io.otl.http.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.session.Desensitizer;
import io.otl.core.session.SessionInput;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The one way the gateway and the OpenTelemetry door record a tool set. Its id is stored (a later
 * call's set is matched against it), so it must stay what earlier builds derived.
 */
class ToolSetsTest {
  private static final Desensitizer D = new Desensitizer(true, Desensitizer.BUILT_IN, List.of());
  private static final String TOOLS = "[{\"type\":\"function\",\"function\":{\"name\":\"call\","
      + "\"description\":\"Calls 13812345678\"}}]";

  @Test
  void theIdIsAHashOfTheDesensitizedSetAsEarlierBuildsDerivedIt() {
    String id = ToolSets.id(TurnRecorder.TOOLS_PREFIX, D, TOOLS);
    assertEquals("gw:tools:6b2fafb1a63fb6384613185e", id); // sha-256 of the text with [PHONE], first 12 bytes
    assertEquals(id, ToolSets.id(TurnRecorder.TOOLS_PREFIX, D, TOOLS.replace("13812345678", "13987654321")),
        "the id cannot be traced back to the number: both are [PHONE]");
    assertEquals(id, TurnRecorder.toolsId(D, TOOLS));
  }

  @Test
  void aSetOverTheTextLimitIsLeftOutAndSaidSo() {
    Instant at = Instant.parse("2026-01-01T00:00:00Z");
    SessionInput.Start whole = ToolSets.start("otlp:tools:x", TOOLS, null, at);
    assertEquals(Map.of("tools", TOOLS), whole.metadata());
    assertEquals("otlp:tools:x", whole.eventId());
    assertEquals(at, whole.at());
    SessionInput.Start omitted = ToolSets.start("gw:tools:x", TOOLS, new TextCut(D, 20), at);
    assertEquals(Map.of("toolsOmitted", TOOLS.length() + " characters, over data-collector.max-text-length"),
        omitted.metadata());
  }
}
