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
 * The API's write routes that take no query parameter refuse one (a new-user trial: {@code POST
 * /v1/sessions/s1/events?agentId=x} was a 202, the parameter silently ignored). Each answers 400
 * naming it, and nothing changes. The gateway's OpenAI paths keep taking what OpenAI clients add.
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
