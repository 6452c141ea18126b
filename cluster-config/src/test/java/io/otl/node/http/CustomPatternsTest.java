package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/data-hardening.md says what the built-in rules leave alone (IP addresses, national phone
 * formats, US social security numbers) and shows custom patterns for them. The page's block, as it
 * stands there, configures a node; what the page says the patterns cover is sent over HTTP.
 */
class CustomPatternsTest {
  private static final Path PAGE = Path.of("..", "docs", "data-hardening.md").toAbsolutePath().normalize();

  /** The first ```hocon block of the page. */
  private static String docBlock() throws Exception {
    String page = Files.readString(PAGE);
    int start = page.indexOf("```hocon\n");
    assertTrue(start >= 0, "docs/data-hardening.md shows the custom patterns in a hocon block");
    start += "```hocon\n".length();
    return page.substring(start, page.indexOf("```", start));
  }

  @Test
  void theDocumentedPatternsRedactWhatTheBuiltInRulesLeave() throws Exception {
    Config custom = ConfigFactory.parseString(docBlock());
    assertEquals(3, custom.getStringList("agentscope.training.data-collector.desensitize.custom").size());
    String sent = "{\"agentId\":\"custom-agent\",\"events\":["
        + "{\"type\":\"start\",\"eventId\":\"s\",\"metadata\":{\"client_ip\":\"198.51.100.7\"}},"
        + "{\"type\":\"message\",\"eventId\":\"m1\",\"role\":\"user\",\"content\":\"from 203.0.113.77, ssn 078-05-1120,"
        + " call (415) 555-0199 or 020 7946 0958; mail jo@example.com\"},"
        + "{\"type\":\"message\",\"eventId\":\"m2\",\"role\":\"assistant\",\"content\":\"ok\",\"msgId\":\"resp-192.0.2.44\"},"
        + "{\"type\":\"tool_call\",\"eventId\":\"t1\",\"callId\":\"c1\",\"toolName\":\"geo\","
        + "\"input\":{\"ip\":\"10.20.30.40\",\"203.0.113.9\":1},\"output\":{\"ssn\":\"219-09-9999\"}}]}";
    try (TrainingNode node = TrainingNode.start(custom.withFallback(
        TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("custom-patterns")), true)))) {
      Http api = new Http(node.httpPort());
      Http.Response r = api.post("/v1/sessions/custom-1/events", sent);
      assertEquals(202, r.status(), r.body());
      JsonNode s = api.get("/v1/sessions/custom-1").json();
      assertEquals("from [REDACTED], ssn [REDACTED], call [PHONE] or [REDACTED]; mail [EMAIL]",
          s.get("messages").get(0).get("content").asText());
      assertEquals("resp-[REDACTED]", s.get("messages").get(1).get("msgId").asText());
      assertEquals("[REDACTED]", s.get("metadata").get("client_ip").asText());
      JsonNode tool = s.get("toolCalls").get(0);
      assertEquals("[REDACTED]", tool.get("input").get("ip").asText());
      assertTrue(tool.get("input").has("[REDACTED]"), "a key is redacted too: " + tool);
      assertEquals("[REDACTED]", tool.get("output").get("ssn").asText());
      for (String raw : List.of("198.51", "203.0", "192.0", "10.20", "078-05", "219-09", "555-01", "7946")) {
        assertFalse(s.toString().contains(raw), raw + " stored: " + s);
      }
    }
  }
}
