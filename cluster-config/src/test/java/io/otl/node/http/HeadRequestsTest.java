package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** HEAD on a GET route answers like GET without a body, behind the same auth (docs/http-edge.md). */
class HeadRequestsTest {
  private static final String TOKEN = "head-token";
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.auth.token", TOKEN, "agentscope.training.auth.protect-reads", true))
        .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-head-")), true)));
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  @Test
  void headAnswersLikeGetWithoutABody() {
    Http authorized = new Http(node.httpPort()).withToken(TOKEN);
    for (String path : new String[] {"/v1/openapi.json", "/v1/jobs", "/v1/models", "/metrics", "/console/",
        "/health/live", "/health/ready", "/v1/sessions/unknown-session", "/v1/training/nobody/policy", "/v1/nope"}) {
      Http.Response get = authorized.get(path);
      Http.Response head = authorized.send("HEAD", path, null);
      assertEquals(get.status(), head.status(), "HEAD " + path);
      assertTrue(head.status() != 405, "HEAD " + path + " is a 405");
      assertEquals("", head.body(), "HEAD " + path + " has no body");
      assertEquals(get.headers().firstValue("Content-Type"), head.headers().firstValue("Content-Type"), path);
    }
    Http.Response openapi = authorized.send("HEAD", "/v1/openapi.json", null);
    assertEquals(200, openapi.status());
    assertEquals(String.valueOf(authorized.get("/v1/openapi.json").body().getBytes(java.nio.charset.StandardCharsets.UTF_8).length),
        openapi.headers().firstValue("Content-Length").orElse(""), "the length GET would send");
  }

  @Test
  void headMeetsTheSameAuthAsGet() {
    Http anonymous = new Http(node.httpPort());
    for (String path : new String[] {"/v1/jobs", "/v1/sessions/s1", "/metrics"}) {
      assertEquals(401, anonymous.get(path).status(), "GET " + path);
      Http.Response head = anonymous.send("HEAD", path, null);
      assertEquals(401, head.status(), "HEAD " + path);
      assertTrue(head.headers().firstValue("WWW-Authenticate").orElse("").startsWith("Bearer"), path);
    }
    assertEquals(200, anonymous.send("HEAD", "/health/live", null).status(), "probes stay open");
    // A POST-only route still says which method it serves.
    Http.Response post = new Http(node.httpPort()).withToken(TOKEN).send("HEAD", "/v1/sessions/s1/events", null);
    assertEquals(405, post.status());
    assertEquals("POST", post.headers().firstValue("Allow").orElse(""));
    // A GET route says HEAD too, since HEAD is answered wherever GET is.
    for (String path : new String[] {"/metrics", "/v1/jobs", "/health/ready"}) {
      Http.Response delete = new Http(node.httpPort()).withToken(TOKEN).send("DELETE", path, null);
      assertEquals(405, delete.status(), path);
      java.util.Set<String> allowed = java.util.Set.of(delete.headers().firstValue("Allow").orElse("").split(",\\s*"));
      assertTrue(allowed.contains("GET") && allowed.contains("HEAD"), path + " Allow: " + allowed);
      // The body says what the header says: it read "supported methods: GET" on every route but the probes.
      assertTrue(delete.body().contains("supported methods: GET, HEAD"), path + ": " + delete.body());
    }
  }
}
