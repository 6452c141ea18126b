package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.JournalSchema;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A generated suite of malformed requests across the write routes: mutated JSON, wrong types,
 * boundary values, oversized bodies, bad ids. Every one must get a 4xx with a JSON error body,
 * and the journal's entity rows must be exactly as before (sharding's own bookkeeping rows,
 * persistence ids under /sharding/, are not data and are excluded).
 */
class BadInputSuiteTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static TrainingNode node;
  private static Http http;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-bad-")), true));
    http = new Http(node.httpPort());
    // Existing data the bad requests must not disturb.
    http.post("/v1/sessions/existing/events", "{\"agentId\":\"agent-x\",\"events\":[" + validMessage("e1") + "]}");
    http.post("/v1/models/agent-x/versions", "{\"version\":\"v1\",\"artifact\":\"a\",\"endpoint\":\"http://e\"}");
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  record BadRequest(String method, String path, byte[] body, String why, String contentType) {
    BadRequest(String method, String path, byte[] body, String why) {
      this(method, path, body, why, "application/json");
    }
  }

  @Test
  void everyMalformedRequestGetsA4xxAndChangesNothing() throws Exception {
    List<BadRequest> requests = generate(new Random(42));
    assertTrue(requests.size() >= 1000, "only " + requests.size() + " generated");
    long before = entityRows();
    int checked = 0;
    for (BadRequest r : requests) {
      Http.Response resp = r.method().equals("GET") ? http.get(r.path())
          : http.postBytes(r.path(), r.body(), r.contentType());
      assertTrue(resp.status() >= 400 && resp.status() < 500,
          r.why() + " → " + resp.status() + " " + resp.body() + " for " + r.path() + " " + preview(r.body()));
      JsonNode body = resp.json();
      assertTrue(body.hasNonNull("error") && body.hasNonNull("message"), r.why() + ": " + resp.body());
      checked++;
    }
    assertEquals(before, entityRows(), "a rejected request changed the journal");
    assertEquals(requests.size(), checked);
    assertEquals(1, http.get("/v1/sessions/existing").json().get("messages").size());
  }

  /**
   * A compressed body (Content-Encoding gzip, br …) on a write route is a 415 naming the encoding,
   * not a 400 about a control character at column 2; nothing is stored. Only /v1/traces takes gzip.
   */
  @Test
  void aCompressedBodyIsA415NamingTheEncodingAndChangesNothing() throws Exception {
    long before = entityRows();
    String good = "{\"agentId\":\"agent-x\",\"events\":[" + validMessage("gz-1") + "]}";
    java.io.ByteArrayOutputStream zipped = new java.io.ByteArrayOutputStream();
    try (var gz = new java.util.zip.GZIPOutputStream(zipped)) {
      gz.write(good.getBytes(StandardCharsets.UTF_8));
    }
    var client = java.net.http.HttpClient.newHttpClient();
    for (String encoding : List.of("gzip", "br", "deflate")) {
      for (String path : List.of("/v1/sessions/gz-session/events", "/v1/sessions/existing/feedback",
          "/v1/models/agent-x/versions", "/v1/training/agent-x/policy")) {
        var request = java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + node.httpPort() + path))
            .header("Content-Type", "application/json").header("Content-Encoding", encoding)
            .method(path.endsWith("policy") ? "PUT" : "POST",
                java.net.http.HttpRequest.BodyPublishers.ofByteArray(zipped.toByteArray())).build();
        var r = client.send(request, java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(415, r.statusCode(), encoding + " " + path + ": " + r.body());
        JsonNode body = JSON.readTree(r.body());
        assertEquals("unsupported_media_type", body.get("error").asText(), r.body());
        assertTrue(body.get("message").asText().contains("Content-Encoding " + encoding), r.body());
      }
    }
    assertEquals(before, entityRows(), "a refused compressed body changed the journal");
    assertEquals(404, http.get("/v1/sessions/gz-session").status());
  }

  /** The limit counts UTF-16 units; an emoji text's 400 said "80000 characters long" for 40,000 emoji. */
  @Test
  void aTextOverTheLimitInEmojiSaysAnEmojiCountsTwo() throws Exception {
    Http.Response r = http.post("/v1/sessions/emoji-long/events",
        batch("agent-x", msg("user", "\uD83D\uDE00".repeat(40_000))));
    assertEquals(400, r.status(), r.body());
    String message = r.json().get("message").asText();
    assertTrue(message.startsWith("events[0].content is 80000 characters long (UTF-16 units: an emoji"), message);
    assertEquals(404, http.get("/v1/sessions/emoji-long").status(), "nothing stored");
  }

  private static String preview(byte[] b) {
    String s = b == null ? "" : new String(b, StandardCharsets.UTF_8);
    return s.length() > 200 ? s.substring(0, 200) + "…" : s;
  }

  private static long entityRows() throws Exception {
    try (Connection c = JournalSchema.connect(node.journal()); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM event_journal WHERE persistence_id NOT LIKE '/sharding/%'")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static String validMessage(String id) {
    return "{\"type\":\"message\",\"eventId\":\"" + id + "\",\"role\":\"user\",\"content\":\"hello\"}";
  }

  /** Valid event objects of every type; each mutation below makes one of them invalid. */
  private static List<ObjectNode> validEvents() throws Exception {
    List<ObjectNode> out = new ArrayList<>();
    for (String s : List.of(
        "{\"type\":\"start\",\"eventId\":\"s\",\"agentVersion\":\"1\",\"modelVersion\":\"v1\",\"metadata\":{\"k\":\"v\"}}",
        validMessage("m"),
        "{\"type\":\"tool_call\",\"eventId\":\"t\",\"callId\":\"c\",\"toolName\":\"search\",\"input\":{},\"output\":{},\"success\":true,\"latencyMs\":5}",
        "{\"type\":\"reasoning\",\"eventId\":\"r\",\"index\":0,\"thought\":\"t\",\"action\":\"a\",\"observation\":\"o\"}",
        "{\"type\":\"feedback\",\"eventId\":\"f\",\"kind\":\"RATING\",\"value\":4,\"feedbackId\":\"fb\"}",
        "{\"type\":\"result\",\"eventId\":\"x\",\"status\":\"SUCCESS\",\"detail\":\"d\"}")) {
      out.add((ObjectNode) JSON.readTree(s));
    }
    return out;
  }

  private static final List<JsonNode> WRONG_VALUES = List.of(
      JSON.getNodeFactory().numberNode(7), JSON.getNodeFactory().textNode("text"),
      JSON.getNodeFactory().booleanNode(true), JSON.getNodeFactory().arrayNode(), JSON.getNodeFactory().objectNode());

  private static List<BadRequest> generate(Random rnd) throws Exception {
    List<BadRequest> out = new ArrayList<>();
    String path = "/v1/sessions/bad-1/events";
    // 1. Every field of every event type with every value of a wrong type.
    for (ObjectNode valid : validEvents()) {
      List<String> fields = new ArrayList<>();
      valid.fieldNames().forEachRemaining(fields::add);
      for (String field : fields) {
        for (JsonNode wrong : WRONG_VALUES) {
          if (!wrongFor(valid.get(field), wrong, field)) continue;
          ObjectNode e = valid.deepCopy();
          e.set(field, wrong);
          out.add(post(path, batch("agent-x", e), "wrong type for " + valid.get("type").asText() + "." + field));
        }
      }
      // 2. Unknown fields (typos).
      for (String typo : List.of("contnet", "rol", "Type", "eventid", "value2", "")) {
        ObjectNode e = valid.deepCopy();
        e.put(typo, "x");
        out.add(post(path, batch("agent-x", e), "unknown field '" + typo + "'"));
      }
      // 3. Truncations at many points of a valid body.
      byte[] full = batch("agent-x", valid).getBytes(StandardCharsets.UTF_8);
      for (int i = 0; i < 80; i++) {
        int cut = 1 + rnd.nextInt(full.length - 1);
        out.add(new BadRequest("POST", path, java.util.Arrays.copyOf(full, cut), "truncated at " + cut));
      }
    }
    // 4. Boundary and enum values the domain refuses.
    for (String v : List.of("0", "6", "-1", "4.5", "1e9", "\"5\"", "null")) {
      out.add(post(path, batch("agent-x", node("{\"type\":\"feedback\",\"kind\":\"RATING\",\"value\":" + v + "}")),
          "rating " + v));
    }
    for (String role : List.of("robot", "USERS", "", "system ", "assistant\u0000")) {
      out.add(post(path, batch("agent-x", msg(role, "x")), "role '" + role + "'"));
    }
    for (String status : List.of("DONE", "", "succes", "null")) {
      out.add(post(path, batch("agent-x", node("{\"type\":\"result\",\"status\":\"" + status + "\"}")), "status " + status));
    }
    for (String kind : List.of("LIKE", "", "thumbs", "RATINGS")) {
      out.add(post(path, batch("agent-x", node("{\"type\":\"feedback\",\"kind\":\"" + kind + "\"}")), "kind " + kind));
    }
    for (String at : List.of("yesterday", "2026-13-01T00:00:00Z", "2026-11-20", "1700000000")) {
      ObjectNode e = msg("user", "x");
      e.put("at", at);
      out.add(post(path, batch("agent-x", e), "at " + at));
    }
    for (String n : List.of("-1", "1.5", "\"5\"", "99999999999999999999999")) {
      out.add(post(path, batch("agent-x", node("{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\",\"latencyMs\":" + n + "}")),
          "latencyMs " + n));
      out.add(post(path, batch("agent-x", node("{\"type\":\"reasoning\",\"index\":" + n + "}")), "index " + n));
    }
    // 5. Bodies that are not the expected object.
    for (String body : List.of("", "null", "[]", "42", "\"str\"", "{}", "{\"agentId\":\"agent-x\"}",
        "{\"events\":[" + validMessage("a") + "]}", "{\"agentId\":\"agent-x\",\"events\":[]}",
        "{\"agentId\":\"agent-x\",\"events\":null}", "{\"agentId\":\"agent-x\",\"events\":[null]}",
        "{\"agentId\":\"agent-x\",\"events\":[1,2]}", "{\"agentId\":\"agent-x\",\"events\":[{}]}",
        "{\"agentId\":\"agent-x\",\"events\":[" + validMessage("a") + "],\"extra\":1}",
        "{\"agentId\":7,\"events\":[" + validMessage("a") + "]}")) {
      out.add(new BadRequest("POST", path, body.getBytes(StandardCharsets.UTF_8), "body " + body));
    }
    // 6. Bad agent and session ids, hostile strings.
    List<String> badIds = List.of("a b", "a/b", "x".repeat(129), "é", "a;DROP TABLE event_journal", "<script>",
        "..", "a\\b", "a%00b", "a\"b", "$(rm)", "a*b", "a,b", "a?b");
    for (String id : badIds) {
      String enc = java.net.URLEncoder.encode(id, StandardCharsets.UTF_8).replace("+", "%20");
      out.add(post(path, "{\"agentId\":" + JSON.writeValueAsString(id) + ",\"events\":[" + validMessage("a") + "]}",
          "agentId " + id));
      out.add(post("/v1/sessions/" + enc + "/events", batch("agent-x", msg("user", "x")), "sessionId " + id));
      out.add(new BadRequest("GET", "/v1/sessions/" + enc, null, "GET sessionId " + id));
      out.add(post("/v1/sessions/" + enc + "/feedback", "{\"kind\":\"THUMBS_UP\"}", "feedback sessionId " + id));
      out.add(post("/v1/feedback/rate?sessionId=" + enc + "&score=3", "", "rate sessionId " + id));
      out.add(new BadRequest("GET", "/v1/models/" + enc, null, "GET models " + id));
      out.add(post("/v1/models/" + enc + "/versions", "{\"version\":\"v2\",\"artifact\":\"a\",\"endpoint\":\"e\"}",
          "register agentId " + id));
      out.add(post("/v1/models/agent-x/versions", "{\"version\":" + JSON.writeValueAsString(id)
          + ",\"artifact\":\"a\",\"endpoint\":\"e\"}", "register version " + id));
    }
    // 7. Feedback and AgentScope-compatible routes.
    for (String score : List.of("0", "6", "", "3.5", "abc", "-2", "99999999999")) {
      out.add(post("/v1/feedback/rate?sessionId=existing&score=" + score, "", "rate score " + score));
    }
    // Digits of other scripts (Arabic-Indic 3, full-width 3, Devanagari 10): Java's parseInt takes them.
    for (String digits : List.of("%D9%A3", "%EF%BC%93", "%E0%A5%A7%E0%A5%A6")) {
      out.add(post("/v1/feedback/rate?sessionId=existing&score=" + digits, "", "rate score " + digits));
      out.add(new BadRequest("GET", "/v1/audit/session/existing?limit=" + digits, null, "audit limit " + digits));
      out.add(new BadRequest("GET", "/v1/audit/session/existing?after=" + digits, null, "audit after " + digits));
    }
    for (String h : List.of("", "maybe", "2", "TRUEISH")) {
      out.add(post("/v1/feedback/thumbs?sessionId=existing&helpful=" + h, "", "thumbs helpful " + h));
    }
    out.add(post("/v1/feedback/thumbs?helpful=true", "", "thumbs without session"));
    out.add(post("/v1/feedback/rate?sessionId=unknown-session&score=3", "", "rate unknown session"));
    for (String body : List.of("{}", "{\"kind\":5}", "{\"kind\":\"RATING\"}", "{\"kind\":\"RATING\",\"value\":0}",
        "{\"kind\":\"THUMBS_UP\",\"bogus\":1}", "[]", "{\"kind\":\"THUMBS_UP\",\"feedbackId\":\"a b\"}", "{")) {
      out.add(post("/v1/sessions/existing/feedback", body, "feedback body " + body));
    }
    // 8. Model routes.
    for (String body : List.of("{}", "{\"version\":\"v1\",\"artifact\":\"a\",\"endpoint\":\"e\"}", "{\"version\":5}",
        "{\"version\":\"v3\"}", "{\"version\":\"v3\",\"artifact\":\"\",\"endpoint\":\"e\"}", "[1]", "{\"version\":\"v3\",\"x\":1}")) {
      out.add(post("/v1/models/agent-x/versions", body, "register body " + body));
    }
    for (String op : List.of("promote", "rollback", "pause", "resume")) {
      out.add(post("/v1/models/agent-x/versions/v404/" + op, "", op + " unknown version"));
      out.add(post("/v1/models/agent-x/versions/v1/" + op + "x", "", "unknown operation " + op + "x"));
    }
    out.add(post("/v1/models/agent-x/versions/v1/rollback", "{\"reason\":[1]}", "rollback reason type"));
    out.add(new BadRequest("GET", "/v1/models/agent-x/route", null, "route without session"));
    out.add(new BadRequest("GET", "/v1/models/agent-x/route?sessionId=a%20b", null, "route bad session"));
    out.add(new BadRequest("GET", "/v1/models/nobody/route?sessionId=s", null, "route unknown agent"));
    // 9. Random bytes, invalid UTF-8, NUL bytes, sizes.
    for (int i = 0; i < 150; i++) {
      byte[] junk = new byte[1 + rnd.nextInt(300)];
      rnd.nextBytes(junk);
      junk[0] = (byte) (i % 2 == 0 ? '{' : junk[0]);
      out.add(new BadRequest("POST", path, junk, "random bytes " + i));
    }
    out.add(new BadRequest("POST", path, new byte[] {'{', '"', 'a', '"', ':', '"', (byte) 0xff, '"', '}'}, "invalid UTF-8"));
    out.add(post(path, batch("agent-x", msg("user", "nul\u0000byte")), "NUL in content"));
    out.add(post(path, batch("agent-x", msg("user", "x".repeat(70_000))), "content over max-text-length"));
    out.add(post(path, "{\"agentId\":\"agent-x\",\"events\":[" + validMessage("a") + "],\"pad\":\""
        + "p".repeat(1_100_000) + "\"}", "body over 1 MiB"));
    StringBuilder many = new StringBuilder();
    for (int i = 0; i < 10_000; i++) many.append(i == 0 ? "" : ",").append(validMessage("m" + i));
    out.add(post(path, "{\"agentId\":\"agent-x\",\"events\":[" + many + "]}", "10,000 events"));
    // 10. A batch with one bad event among good ones stores none of them.
    for (int i = 0; i < 100; i++) {
      ArrayNode events = JSON.createArrayNode();
      for (int j = 0; j < 5; j++) events.add(msg("user", "good " + i + "/" + j));
      events.insert(rnd.nextInt(6), msg("robot", "bad"));
      ObjectNode b = JSON.createObjectNode();
      b.put("agentId", "agent-x");
      b.set("events", events);
      out.add(post("/v1/sessions/mixed-" + i + "/events", b.toString(), "mixed batch " + i));
    }
    laxJson(out, path);
    return out;
  }

  /** 11. Lax JSON that Jackson accepts by default (issue #14.7), and nesting past the limit (#14.6). */
  private static void laxJson(List<BadRequest> out, String path) {
    String good = batch("agent-x", msg("user", "x"));
    for (String tail : List.of("x", "}", " 1", "[]", "null", good, " " + good, "\n{}", "/*c*/", "\u0000")) {
      out.add(post(path, good + tail, "trailing " + tail.length() + " chars after the document"));
    }
    String m = "{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\"}";
    for (String body : List.of(
        "{\"agentId\":\"agent-x\",\"agentId\":\"agent-y\",\"events\":[" + m + "]}",
        "{\"agentId\":\"agent-x\",\"events\":[" + m + "],\"events\":[" + m + "]}",
        "{\"agentId\":\"agent-x\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"a\",\"content\":\"b\"}]}",
        "{\"agentId\":\"agent-x\",\"events\":[{\"type\":\"message\",\"type\":\"result\",\"role\":\"user\",\"content\":\"a\"}]}",
        batchRaw(tool("{\"a\":1,\"a\":2}")),
        batchRaw("{\"type\":\"start\",\"metadata\":{\"k\":\"v\",\"k\":\"w\"}}"))) {
      out.add(post(path, body, "duplicate key " + body.hashCode()));
    }
    for (String s : List.of("\\u0000", "a\\u0000b", "\\ud800", "\\udfff", "a\\ud800b", "\\udc00\\ud800",
        "x\\ud83d")) {
      out.add(post(path, batchRaw("{\"type\":\"message\",\"role\":\"user\",\"content\":\"" + s + "\"}"),
          "content " + s));
      out.add(post(path, batchRaw(tool("{\"q\":\"" + s + "\"}")), "tool input string " + s));
      out.add(post(path, batchRaw(tool("{\"" + s + "\":1}")), "tool input key " + s));
      out.add(post(path, batchRaw("{\"type\":\"start\",\"metadata\":{\"" + s + "\":\"v\"}}"), "metadata key " + s));
    }
    for (String n : List.of("1e999", "-1e999", "1e400", "123e9999", "[1e999]", "{\"x\":{\"y\":-1E+999}}")) {
      out.add(post(path, batchRaw(tool("{\"num\":" + n + "}")), "number " + n));
    }
    out.add(post(path, batchRaw("{\"type\":\"feedback\",\"kind\":\"RATING\",\"value\":1e999}"), "rating 1e999"));
    for (String at : List.of("+1000000000-01-01T00:00:00Z", "-999999999-01-01T00:00:00Z", "+10000-01-01T00:00:00Z",
        "1969-12-31T23:59:59Z", "0000-01-01T00:00:00Z", "-0001-01-01T00:00:00Z")) {
      ObjectNode e = msg("user", "x");
      e.put("at", at);
      out.add(post(path, batch("agent-x", e), "at " + at));
      out.add(post("/v1/sessions/existing/feedback", "{\"kind\":\"THUMBS_UP\",\"at\":\"" + at + "\"}", "feedback at " + at));
    }
    for (int depth : new int[] {30, 33, 64, 500, 999}) {
      out.add(post(path, batchRaw(tool("{\"a\":".repeat(depth) + "1" + "}".repeat(depth))), "input objects " + depth + " deep"));
      out.add(post(path, batchRaw(tool("[".repeat(depth) + "]".repeat(depth))), "input arrays " + depth + " deep"));
    }
    for (String type : java.util.Arrays.asList("text/plain", "application/xml", "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x", "text/json", "application/octet-stream", null)) {
      out.add(new BadRequest("POST", path, good.getBytes(StandardCharsets.UTF_8), "Content-Type " + type, type));
      out.add(new BadRequest("POST", "/v1/sessions/existing/feedback",
          "{\"kind\":\"THUMBS_UP\"}".getBytes(StandardCharsets.UTF_8), "feedback Content-Type " + type, type));
      out.add(new BadRequest("POST", "/v1/models/agent-x/versions",
          "{\"version\":\"v9\",\"artifact\":\"a\",\"endpoint\":\"e\"}".getBytes(StandardCharsets.UTF_8),
          "register Content-Type " + type, type));
    }
  }

  private static String tool(String input) {
    return "{\"type\":\"tool_call\",\"callId\":\"c\",\"toolName\":\"t\",\"input\":" + input + ",\"output\":{}}";
  }

  private static String batchRaw(String event) {
    return "{\"agentId\":\"agent-x\",\"events\":[" + event + "]}";
  }

  private static boolean wrongFor(JsonNode valid, JsonNode wrong, String field) {
    if (field.equals("input") || field.equals("output")) return false; // any JSON is allowed there
    if (valid.isTextual()) return !wrong.isTextual();
    if (valid.isIntegralNumber()) return !wrong.isIntegralNumber() && !(field.equals("value") && wrong.isNumber());
    if (valid.isNumber()) return !wrong.isNumber();
    if (valid.isBoolean()) return !wrong.isBoolean();
    if (valid.isObject()) return !wrong.isObject() || field.equals("metadata") && false;
    return false;
  }

  private static ObjectNode node(String json) throws Exception {
    return (ObjectNode) JSON.readTree(json);
  }

  private static ObjectNode msg(String role, String content) {
    ObjectNode e = JSON.createObjectNode();
    e.put("type", "message");
    e.put("role", role);
    e.put("content", content);
    return e;
  }

  private static String batch(String agent, ObjectNode event) {
    ObjectNode b = JSON.createObjectNode();
    b.put("agentId", agent);
    b.set("events", JSON.createArrayNode().add(event));
    return b.toString();
  }

  private static BadRequest post(String path, String body, String why) {
    return new BadRequest("POST", path, body.getBytes(StandardCharsets.UTF_8), why);
  }
}
