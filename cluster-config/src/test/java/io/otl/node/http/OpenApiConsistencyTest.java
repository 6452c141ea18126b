package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code /v1/openapi.json} matches what the server does: every documented route exists (it does
 * not answer "no such route" or 405), and no undocumented method or path under the API answers as
 * if it existed.
 */
class OpenApiConsistencyTest {
  private static final List<String> METHODS = List.of("GET", "POST", "PUT", "DELETE", "PATCH");
  private static TrainingNode node;
  private static Http http;
  private static JsonNode doc;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-openapi-")), true));
    http = new Http(node.httpPort());
    Http.Response r = http.get("/v1/openapi.json");
    assertEquals(200, r.status());
    doc = r.json();
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  /** A concrete path for a template: ids that are valid but unknown. */
  private static String concrete(String template) {
    return template.replace("{kind}", "session").replace("{jobId}", "job-1-agent-x").replaceAll("\\{[^}]+}", "x1");
  }

  /**
   * "Route missing" is 404 with the router's own message, the gateway's OpenAI-shaped 404 {@code
   * unknown_url} (e.g. GET /v1/chat/completions, OpenAI's stored completions), or 405; an unknown
   * entity is a 404 JSON body naming it.
   */
  private static boolean routeMissing(Http.Response r) {
    if (r.status() == 405) return true;
    return r.status() == 404 && (r.body().contains("could not be found") || r.body().contains("\"unknown_url\""));
  }

  @Test
  void everyDocumentedRouteExists() {
    assertEquals("3.0.3", doc.get("openapi").asText());
    int checked = 0;
    for (Operation op : operations()) {
      String template = op.template();
      String method = op.method();
      Http.Response r = http.send(method, concrete(template) + (template.endsWith("/route") ? "?sessionId=s1" : ""),
          method.equals("POST") ? "{}" : null);
      assertFalse(routeMissing(r), method + " " + template + " is documented but not served: " + r.status() + " " + r.body());
      assertTrue(r.status() < 500 || r.status() == 503, method + " " + template + " → " + r.status() + " " + r.body());
      assertDocumented(template, method, r, "{}");
      checked++;
    }
    assertTrue(checked >= 24, "only " + checked + " operations documented");
  }

  /**
   * A client generated from the document learns the error answers from it: every route that takes a
   * body refuses one that is not JSON, and the status it answers (415 where the body is read as
   * JSON) is one the document lists for that operation.
   */
  @Test
  void aBodyThatIsNotJsonGetsADocumentedStatus() {
    int checked = 0;
    for (Operation op : operations()) {
      String template = op.template();
      String method = op.method();
      if (method.equals("POST") || method.equals("PUT")) {
        String path = concrete(template) + (template.startsWith("/v1/exports/") ? "?format=sft" : "");
        Http.Response r = http.send(method, path, "hello".getBytes(java.nio.charset.StandardCharsets.UTF_8), "text/plain");
        assertDocumented(template, method, r, "a text/plain body");
        checked++;
      }
    }
    assertTrue(checked >= 15, "only " + checked + " operations with a body documented");
    Http.Response events = http.send("POST", "/v1/sessions/x1/events",
        "{\"agentId\":\"a1\",\"events\":[]}".getBytes(java.nio.charset.StandardCharsets.UTF_8), "text/plain");
    assertEquals(415, events.status(), events.body());
  }

  /**
   * The response schemas name every field the server sends (design §7.1: fields may be added, and
   * then they are documented): a session as stored, an agent's versions, a route, the coordinator's
   * view, and the answers to recording events, registering a version and a manual trigger.
   */
  @Test
  void everyFieldOfTheseAnswersIsInTheirSchema() throws InterruptedException {
    Http.Response stored = http.post("/v1/sessions/schema-1/events", "{\"agentId\":\"schema-agent\",\"events\":["
        + "{\"type\":\"message\",\"eventId\":\"m1\",\"role\":\"user\",\"content\":\"hi\"},"
        + "{\"type\":\"result\",\"eventId\":\"r1\",\"status\":\"SUCCESS\"}]}");
    assertEquals(202, stored.status(), stored.body());
    Http.Response registered = http.post("/v1/models/schema-agent/versions",
        "{\"version\":\"v1\",\"artifact\":\"s3://bucket/v1\",\"endpoint\":\"http://127.0.0.1:9/v1\"}");
    assertEquals(201, registered.status(), registered.body());
    assertFieldsInSchema("/v1/sessions/{sessionId}", http.get("/v1/sessions/schema-1"));
    assertFieldsInSchema("/v1/models/{agentId}", http.get("/v1/models/schema-agent"));
    assertFieldsInSchema("/v1/models/{agentId}/route", http.get("/v1/models/schema-agent/route?sessionId=schema-1"));
    assertFieldsInSchema("/v1/models/{agentId}/versions", "post", registered);
    assertFieldsInSchema("/v1/sessions/{sessionId}/events", "post", stored);
    // The coordinator learns of the trajectory through its feed: trigger once it has one.
    io.otl.node.testing.Await.until("a coordinator for schema-agent", () -> http.get("/v1/training/schema-agent"),
        r -> r.status() == 200);
    assertFieldsInSchema("/v1/training/{agentId}", http.get("/v1/training/schema-agent"));
    assertFieldsInSchema("/v1/training/{agentId}/trigger", "post", http.post("/v1/training/schema-agent/trigger", null));
  }

  /**
   * A cancel answers the job's id and the status it found, not a whole job: its 202 was documented as
   * a {@code Job} (twelve fields), so a generated client expected {@code agentId}, {@code history} …
   * that never came (trial t39). Its schema names exactly what the route writes (the reply record
   * through the API's own mapper; a live cancel races the job's export, so the reply is built here).
   */
  @Test
  void theCancelAnswerIsDocumentedAsItIsWritten() throws Exception {
    JsonNode written = io.otl.http.Json.MAPPER.readTree(io.otl.http.Json.MAPPER.writeValueAsBytes(
        new io.otl.core.coordinator.TrainingCoordinator.CancelAccepted("job-1-agent-x",
            io.otl.core.coordinator.CoordinatorState.JobStatus.RUNNING)));
    Set<String> sent = new HashSet<>();
    written.fieldNames().forEachRemaining(sent::add);
    JsonNode schema = doc.get("paths").get("/v1/jobs/{jobId}/cancel").get("post").get("responses").get("202")
        .get("content").get("application/json").get("schema");
    while (schema.has("$ref")) {
      schema = doc.get("components").get("schemas").get(schema.get("$ref").asText().replace("#/components/schemas/", ""));
    }
    Set<String> documented = new HashSet<>();
    schema.get("properties").fieldNames().forEachRemaining(documented::add);
    assertEquals(sent, documented, "the fields of a cancel's 202");
  }

  /** The probes' answers are documented with their bodies: a client reads the failing check from them. */
  @Test
  void theHealthAnswersAreInTheirSchemas() throws InterruptedException {
    assertFieldsInSchema("/health/live", http.get("/health/live"));
    io.otl.node.testing.Await.until("the node ready", () -> http.get("/health/ready"), r -> r.status() == 200);
    assertFieldsInSchema("/health/ready", http.get("/health/ready"));
    JsonNode notReady = doc.get("paths").get("/health/ready").get("get").get("responses").get("503");
    assertEquals("#/components/schemas/Readiness",
        notReady.path("content").path("application/json").path("schema").path("$ref").asText(), notReady.toString());
  }

  /**
   * A node that guards reads answers every read without the token with a status its operation lists:
   * {@code /metrics} answered 401, which the document did not name.
   */
  @Test
  void aNodeGuardingReadsAnswersDocumentedStatuses() throws Exception {
    try (TrainingNode guarded = TrainingNode.start(com.typesafe.config.ConfigFactory.parseMap(java.util.Map.of(
            "agentscope.training.auth.token", "doc-token", "agentscope.training.auth.protect-reads", true))
        .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-openapi-auth-")), true)))) {
      Http anonymous = new Http(guarded.httpPort());
      int refused = 0;
      for (Operation op : operations()) {
        if (!op.method().equals("GET")) continue;
        Http.Response r = anonymous.get(concrete(op.template()) + (op.template().endsWith("/route") ? "?sessionId=s1" : ""));
        assertDocumented(op.template(), op.method(), r, "no token");
        if (r.status() == 401) refused++;
      }
      assertEquals(401, anonymous.get("/metrics").status());
      assertTrue(refused >= 10, "only " + refused + " reads refused");
    }
  }

  private static void assertFieldsInSchema(String template, String method, Http.Response r) {
    assertTrue(r.status() >= 200 && r.status() < 300, template + ": " + r.status() + " " + r.body());
    JsonNode answers = doc.get("paths").get(template).get(method).get("responses").get(String.valueOf(r.status()));
    assertTrue(answers != null, method + " " + template + " answered " + r.status() + ", which the document does not list");
    List<String> undocumented = new ArrayList<>();
    collectUndocumented(answers.get("content").get("application/json").get("schema"), r.json(), template, undocumented);
    assertEquals(List.of(), undocumented, "fields " + method + " " + template + " sends that its schema does not name");
  }

  private static void assertFieldsInSchema(String template, Http.Response r) {
    assertEquals(200, r.status(), template + ": " + r.body());
    JsonNode schema = doc.get("paths").get(template).get("get").get("responses").get("200")
        .get("content").get("application/json").get("schema");
    List<String> undocumented = new ArrayList<>();
    collectUndocumented(schema, r.json(), template, undocumented);
    assertEquals(List.of(), undocumented, "fields " + template + " sends that its schema does not name");
  }

  /** Walks an answer beside its schema ($ref resolved), down objects with properties and arrays. */
  private static void collectUndocumented(JsonNode schema, JsonNode value, String where, List<String> out) {
    while (schema.has("$ref")) {
      schema = doc.get("components").get("schemas").get(schema.get("$ref").asText().replace("#/components/schemas/", ""));
    }
    if (value.isObject() && schema.has("properties")) {
      JsonNode props = schema.get("properties");
      value.fieldNames().forEachRemaining(f -> {
        if (!props.has(f)) out.add(where + "." + f);
        else if (!value.get(f).isNull()) collectUndocumented(props.get(f), value.get(f), where + "." + f, out);
      });
    } else if (value.isArray() && value.size() > 0 && schema.has("items")) {
      collectUndocumented(schema.get("items"), value.get(0), where + "[]", out);
    }
  }

  /**
   * An id the server refuses (a space in it) is a 400 on every route with a path parameter; each
   * operation must list it. GET /v1/training/{agentId}/policy answered 400 but listed only
   * 200/401/404/429/503, so a generated client had no error type for it.
   */
  @Test
  void anInvalidPathIdAnswersAStatusTheDocumentLists() {
    int checked = 0;
    for (Operation op : operations()) {
      if (!op.template().contains("{") || op.template().startsWith("/v1/audit/lineage")) continue;
      String path = op.template().replace("{kind}", "session").replaceAll("\\{[^}]+}", "bad%20id")
          + (op.template().endsWith("/route") ? "?sessionId=s1" : "");
      Http.Response r = http.send(op.method(), path, op.method().equals("GET") ? null : "{}");
      assertTrue(r.status() < 500, op.method() + " " + path + " → " + r.status() + " " + r.body());
      assertDocumented(op.template(), op.method(), r, "an invalid id");
      checked++;
    }
    assertTrue(checked >= 20, "only " + checked + " operations with path parameters");
  }

  /** An error status the server answered is listed among the operation's responses. */
  private static void assertDocumented(String template, String method, Http.Response r, String sent) {
    if (r.status() < 400) return;
    JsonNode responses = doc.get("paths").get(template).get(method.toLowerCase()).get("responses");
    List<String> listed = new ArrayList<>();
    responses.fieldNames().forEachRemaining(listed::add);
    assertTrue(listed.contains(String.valueOf(r.status())), method + " " + template + " with " + sent + " answers "
        + r.status() + ", which the document does not list " + listed + ": " + r.body());
  }

  /** One documented operation: a path template and its method, upper case. */
  private record Operation(String template, String method) {}

  /** Every operation the document lists, in its order. */
  private List<Operation> operations() {
    List<Operation> out = new ArrayList<>();
    doc.get("paths").fields().forEachRemaining(path ->
        path.getValue().fieldNames().forEachRemaining(m -> out.add(new Operation(path.getKey(), m.toUpperCase()))));
    return out;
  }

  @Test
  void nothingUndocumentedAnswers() {
    Set<String> documented = new HashSet<>();
    List<String> templates = new ArrayList<>();
    doc.get("paths").fieldNames().forEachRemaining(templates::add);
    for (Operation op : operations()) documented.add(op.method() + " " + op.template());
    for (String template : templates) {
      for (String method : METHODS) {
        if (documented.contains(method + " " + template)) continue;
        Http.Response r = http.send(method, concrete(template), method.equals("GET") || method.equals("DELETE") ? null : "{}");
        assertTrue(routeMissing(r), method + " " + template + " answers " + r.status() + " but is not documented: " + r.body());
      }
    }
    for (String extra : List.of("/v1/sessions", "/v1/training", "/v1/audit", "/v1/feedback",
        "/v1/sessions/x1/events/extra", "/v1/jobs/job-1-a/cancel/now", "/v2/sessions/x1", "/admin")) {
      for (String method : METHODS) {
        Http.Response r = http.send(method, extra, method.equals("GET") || method.equals("DELETE") ? null : "{}");
        assertTrue(routeMissing(r), method + " " + extra + " answers " + r.status() + " but is not documented: " + r.body());
      }
    }
  }
}
