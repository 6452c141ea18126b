package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The API's routes refuse a query parameter they do not take (a new-user trial: {@code POST
 * /v1/sessions/s1/events?agentId=x} was a 202, the parameter silently ignored; {@code GET
 * /v1/sessions/s1?limt=10} too). Each answers 400 naming it, and nothing changes. The gateway's OpenAI
 * paths keep taking what OpenAI clients add.
 */
class WriteRoutesRefuseQueryParamsTest {
  private static TrainingNode node;
  private static Http api;

  @BeforeAll
  static void start() throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "write-query-" + UUID.randomUUID()));
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir), true));
    api = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  private record Write(String method, String path, String body) {}

  @Test
  void everyWriteRouteRefusesAQueryParameterByNameAndChangesNothing() {
    String events = "{\"agentId\":\"q-agent\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}]}";
    List<Write> writes = List.of(
        new Write("POST", "/v1/sessions/q-s1/events?agentId=x", events),
        new Write("POST", "/v1/sessions/q-s1/feedback?agentId=q-agent", "{\"kind\":\"THUMBS_UP\",\"agentId\":\"q-agent\"}"),
        new Write("POST", "/v1/models/q-agent/versions?dryRun=true",
            "{\"version\":\"v1\",\"artifact\":\"ckpt/v1\",\"endpoint\":\"http://127.0.0.1:9/v1\"}"),
        new Write("POST", "/v1/models/q-agent/versions/v1/promote?force=true", null),
        new Write("POST", "/v1/models/q-agent/versions/v1/rollback?reason=bad", null),
        new Write("POST", "/v1/models/q-agent/versions/v1/pause?x=1", null),
        new Write("POST", "/v1/models/q-agent/versions/v1/resume?x=1", null),
        new Write("POST", "/v1/training/q-agent/trigger?algorithm=dpo", null),
        new Write("PUT", "/v1/training/q-agent/policy?algorithm=dpo", "{\"algorithm\":\"sft\"}"),
        new Write("POST", "/v1/jobs/job-1/cancel?force=true", null));
    for (Write w : writes) {
      Http.Response r = api.send(w.method(), w.path(), w.body());
      String name = w.path().substring(w.path().indexOf('?') + 1, w.path().indexOf('='));
      assertEquals(400, r.status(), w + ": " + r.body());
      assertEquals("invalid_request", r.json().path("error").asText(), r.body());
      assertEquals("the query parameter " + name + " is not taken: this route takes no query parameters",
          r.json().path("message").asText(), w + ": " + r.body());
    }
    assertEquals(404, api.get("/v1/sessions/q-s1").status(), "no session was recorded");
    assertEquals(404, api.get("/v1/models/q-agent").status(), "no version was registered");
    assertFalse(api.get("/v1/training/q-agent/policy").body().contains("dpo"), "the policy is unchanged");
    // Without the parameter the same request is taken.
    assertEquals(202, api.post("/v1/sessions/q-s1/events", events).status());
  }

  /**
   * One rule for every documented route, reads included: {@code GET /v1/sessions/s1?limt=10} answered the
   * session as if the typo were not there, while {@code GET /v1/jobs?limt=10} was a 400. Each parameter a
   * route does not take is a 400 naming it; what a route takes still works, and a request no route
   * documents keeps its 404 or 405.
   */
  @Test
  void everyDocumentedRouteRefusesAnUnknownQueryParameterByName() {
    String events = "{\"agentId\":\"r-agent\",\"events\":[{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}]}";
    assertEquals(202, api.post("/v1/sessions/r-s1/events", events).status());
    String none = " is not taken: this route takes no query parameters";
    for (String path : List.of("/v1/sessions/r-s1?limt=10", "/v1/models/r-agent?limt=10",
        "/v1/models/r-agent/traffic?limt=10", "/v1/training/r-agent?limt=10", "/v1/training/r-agent/policy?limt=10",
        "/v1/jobs/job-1-r-agent?limt=10", "/v1/agents?limt=10", "/v1/openapi.json?limt=10")) {
      Http.Response r = api.get(path);
      assertEquals(400, r.status(), path + ": " + r.body());
      assertEquals("the query parameter limt" + none, r.json().path("message").asText(), path + ": " + r.body());
    }
    assertEquals(400, api.send("HEAD", "/v1/sessions/r-s1?limt=10", (String) null).status(), "HEAD is GET's");
    Http.Response jobs = api.get("/v1/jobs?limt=10");
    assertEquals("the query parameter limt is not one this route takes; it takes agentId, status",
        jobs.json().path("message").asText(), jobs.body());
    Http.Response lineage = api.get("/v1/audit/lineage/session/r-s1?limt=10");
    assertEquals(400, lineage.status(), lineage.body());
    Http.Response alias = api.post("/feedback/rate?sessionId=r-s1&score=5&limt=1", null);
    assertEquals(400, alias.status(), alias.body());
    assertTrue(alias.json().path("message").asText().startsWith("the query parameter limt is not one"), alias.body());
    Http.Response twice = api.get("/v1/sessions/r-s1?x=1&x=2");
    assertEquals(400, twice.status(), twice.body());

    // what routes take still works
    assertEquals(200, api.get("/v1/sessions/r-s1").status());
    assertEquals(200, api.get("/v1/jobs?agentId=r-agent").status());
    assertEquals(200, api.get("/v1/audit/session/r-s1?limit=5").status());
    // an empty pair (a query joined as strings) names no parameter
    assertEquals(200, api.get("/v1/sessions/r-s1?&").status());
    assertEquals(200, api.get("/v1/jobs?agentId=r-agent&").status());
    // the lineage of an agent called "timeline": the lineage route's version, not the timeline route's asOf
    Http.Response timelineAgent = api.get("/v1/audit/lineage/model/timeline?version=v1");
    assertEquals(404, timelineAgent.status(), timelineAgent.body());
    // no documented operation: the route's own answer, not a query error
    assertEquals(404, api.get("/v1/session/r-s1?limt=10").status());
    Http.Response delete = api.send("DELETE", "/v1/sessions/r-s1?limt=10", (String) null);
    assertEquals(405, delete.status(), delete.body());
    // OTLP's exporters keep their endpoint's query: the parameter is no reason to refuse the batch
    Http.Response traces = api.postBytes("/v1/traces?vendor-key=1", "{\"resourceSpans\":[]}".getBytes(),
        "application/json");
    assertEquals(200, traces.status(), traces.body());
  }

  @Test
  void theGatewaysOpenAiPathsStillTakeWhatClientsAdd() {
    Http.Response models = api.get("/v1/models?api-version=2024-10-21", "X-Agent-Id", "q-agent");
    assertEquals(200, models.status(), models.body());
    Http.Response chat = api.postWithHeaders("/v1/chat/completions?api-version=2024-10-21",
        "{\"model\":\"nobody\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}".getBytes(),
        "X-Agent-Id", "q-agent");
    assertFalse(chat.body().contains("query parameter"), chat.body());
    assertTrue(chat.status() != 400 || !chat.body().contains("api-version"), chat.body());
  }
}
