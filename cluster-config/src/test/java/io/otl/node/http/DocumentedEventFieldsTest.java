package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/api.md names the fields of each event {@code type} ("The fields of each event `type`, …") and of
 * the {@code POST /v1/sessions/{sessionId}/feedback} body: each list is the one the node takes, as its
 * 400 for an unknown field lists them ({@code allowed: [...]}). Trial t169: the page left out a
 * feedback's {@code source} (design §3.1's FeedbackRecorded field, taken by both), so a user writing
 * events from the page could not tell a rating's channel. A real node over loopback.
 */
class DocumentedEventFieldsTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern PARAGRAPH = Pattern.compile(
      "The fields of each event `type`, besides the optional `eventId` and `at` \\(ISO-8601; the server's time when\\s+"
          + "absent\\): (.*?)\\. `latencyMs` and `index` are integers", Pattern.DOTALL);
  private static final Pattern FEEDBACK_ROW = Pattern.compile("\\| POST `/v1/sessions/\\{sessionId}/feedback` \\|([^\\n]*)");
  private static final Pattern TICKED = Pattern.compile("`([A-Za-z_]+)`");
  private static final Pattern ALLOWED = Pattern.compile("allowed: \\[([^\\]]*)]");

  @Test
  void theApiPageNamesEveryFieldEachEventTypeAndTheFeedbackBodyTake(@TempDir Path dir) throws Exception {
    String page = Files.readString(ROOT.resolve("docs/api.md"));
    Map<String, TreeSet<String>> documented = documentedEventFields(page);
    assertEquals(List.of("start", "message", "tool_call", "reasoning", "feedback", "result"),
        new ArrayList<>(documented.keySet()), "the paragraph names the six types in order");
    Matcher row = FEEDBACK_ROW.matcher(page);
    assertTrue(row.find(), "docs/api.md has the POST …/feedback row");
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir.resolve("data")), true))) {
      Http http = new Http(node.httpPort());
      for (Map.Entry<String, TreeSet<String>> type : documented.entrySet()) {
        Http.Response r = http.post("/v1/sessions/doc-fields/events",
            "{\"agentId\":\"doc-agent\",\"events\":[{\"type\":\"" + type.getKey() + "\",\"notAField\":1}]}");
        assertEquals(400, r.status(), r.body());
        assertEquals(type.getValue(), allowed(r.json().get("message").asText()),
            "docs/api.md's fields of a " + type.getKey() + " event, against the node's: " + r.body());
      }
      Http.Response fb = http.post("/v1/sessions/doc-fields/feedback", "{\"kind\":\"ADOPTED\",\"notAField\":1}");
      assertEquals(400, fb.status(), fb.body());
      for (String field : allowed(fb.json().get("message").asText())) {
        assertTrue(row.group(1).contains("\"" + field + "\""),
            "docs/api.md's POST …/feedback row names \"" + field + "\", which the body takes: " + fb.body());
      }
    }
  }

  /** Type → its fields, from the paragraph's {@code `type` `field`, `field`; …} list (values in brackets left out). */
  private static Map<String, TreeSet<String>> documentedEventFields(String page) {
    Matcher m = PARAGRAPH.matcher(page);
    assertTrue(m.find(), "docs/api.md has the paragraph naming the fields of each event type");
    Map<String, TreeSet<String>> byType = new LinkedHashMap<>();
    for (String part : m.group(1).replaceAll("\\([^)]*\\)", "").split(";")) {
      Matcher names = TICKED.matcher(part);
      assertTrue(names.find(), "a type in: " + part);
      TreeSet<String> fields = new TreeSet<>();
      byType.put(names.group(1), fields);
      while (names.find()) fields.add(names.group(1));
    }
    return byType;
  }

  /** The names in a 400's {@code allowed: [a, b]} list, without {@code eventId} and {@code at}. */
  private static TreeSet<String> allowed(String message) {
    Matcher m = ALLOWED.matcher(message);
    assertTrue(m.find(), "the 400 lists the allowed fields: " + message);
    TreeSet<String> names = new TreeSet<>(List.of(m.group(1).split(",\\s*")));
    names.remove("eventId");
    names.remove("at");
    return names;
  }
}
