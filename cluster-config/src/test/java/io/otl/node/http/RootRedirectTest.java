package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code http://host:8080/} is what a new user opens first in a browser: it was the JSON 404 "no route
 * of this node takes this method and path". It redirects to the console (docs/api.md), with no token
 * needed even where reads are guarded, since the redirect, like the console's files, holds no data.
 */
class RootRedirectTest {
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.auth.token", "root-token", "agentscope.training.auth.protect-reads", true))
        .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-root-")), true)));
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  @Test
  void getAndHeadOfTheRootRedirectToTheConsole() {
    Http anonymous = new Http(node.httpPort());
    for (String method : new String[] {"GET", "HEAD"}) {
      Http.Response r = anonymous.send(method, "/", null);
      assertEquals(302, r.status(), method + " /: " + r.body());
      assertEquals("/console", r.headers().firstValue("Location").orElse(""), method + " /");
    }
    assertEquals("", anonymous.send("HEAD", "/", null).body(), "HEAD has no body");
    // Where it points is the console's page, answered without a token too.
    Http.Response console = anonymous.get("/console");
    assertEquals(200, console.status(), console.body());
    assertTrue(console.headers().firstValue("Content-Type").orElse("").startsWith("text/html"), console.headers().toString());
  }

  @Test
  void anotherMethodOnTheRootIsA405NamingGetAndHead() {
    Http authorized = new Http(node.httpPort()).withToken("root-token");
    for (String method : new String[] {"POST", "PUT", "DELETE", "PATCH"}) {
      Http.Response r = authorized.send(method, "/", null);
      assertEquals(405, r.status(), method + " /: " + r.body());
      assertEquals(Set.of("GET", "HEAD"), Set.of(r.headers().firstValue("Allow").orElse("").split(",\\s*")), method);
      assertEquals("method_not_allowed", r.json().get("error").asText(), r.body());
      assertTrue(r.body().contains("supported methods: GET, HEAD"), r.body());
    }
  }
}
