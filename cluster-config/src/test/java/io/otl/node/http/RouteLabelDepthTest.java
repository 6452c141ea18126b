package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Routes that answer any path below them (the console's files, the gateway's OpenAI-style 404
 * {@code unknown_url} for {@code /v1/chat/completions/…}, {@code /v1/embeddings/…}, {@code /models/…})
 * were labelled with one {@code {id}} per path segment: each depth a client sent was a new
 * {@code otl_http_requests_total} series and 16 histogram lines, so anyone could grow the scrape
 * without limit (docs/http-edge.md: "A client cannot create labels").
 */
class RouteLabelDepthTest {
  private static final Pattern ROUTE = Pattern.compile("otl_http_requests_total\\{route=\"([^\"]*)\"");
  private static TrainingNode node;
  private static Http http;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-depth-")), true));
    http = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  @Test
  void deepPathsUnderCatchAllRoutesAddNoLabels() {
    assertEquals(200, http.get("/console").status());
    assertEquals(200, http.get("/console/").status());
    assertEquals(200, http.get("/console/js/app.js").status());
    assertEquals(200, http.get("/console/js/views/models.js").status());
    for (String prefix : new String[] {"/console", "/v1/chat/completions", "/v1/embeddings", "/models", "/chat/completions"}) {
      StringBuilder path = new StringBuilder(prefix);
      for (int depth = 1; depth <= 40; depth++) {
        path.append("/d").append(depth);
        int status = http.get(path.toString()).status();
        assertEquals(404, status, path.toString());
        assertTrue(http.send("DELETE", path.toString(), null).status() >= 400, path.toString());
      }
    }
    Set<String> routes = new TreeSet<>();
    Matcher m = ROUTE.matcher(http.get("/metrics").body());
    while (m.find()) routes.add(m.group(1));
    // The console's files share one label per method; everything else that no route documents is unmatched.
    assertTrue(routes.contains("GET /console/{file}"), routes.toString());
    assertTrue(routes.contains("GET /console"), "the console's page has its own label: " + routes);
    assertTrue(routes.contains("unmatched"), routes.toString());
    for (String route : routes) {
      assertTrue(!route.contains("{id}/{id}"), "a label per path depth: " + routes);
    }
    assertTrue(routes.size() <= 7, routes.toString());
  }
}
