package io.otl.node.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Without a browser: GET /console answers the page, every file it references (and every module
 * those import) is served with the right content type, outside auth, and nothing else leaks.
 */
class ConsoleAssetsTest {
  private static final Pattern HTML_REF = Pattern.compile("(?:src|href)=\"(/console/[^\"]+)\"");
  private static final Pattern JS_IMPORT = Pattern.compile("(?:import|export)\\s[^;]*?from\\s+'([^']+)'|import\\s+'([^']+)'");
  private static final Map<String, String> TYPES = Map.of(
      "html", "text/html", "js", "application/javascript", "css", "text/css", "svg", "image/svg+xml");

  @TempDir static Path dir;
  static TrainingNode node;
  static Http http;

  @BeforeAll
  static void start() {
    // Reads protected too: the console's files must still be served without a token.
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir), true).withFallback(ConfigFactory.parseMap(Map.of(
        "agentscope.training.auth.token", "assets-secret",
        "agentscope.training.auth.protect-reads", true))));
    http = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  private static String contentType(Http.Response r) {
    return r.headers().firstValue("Content-Type").orElse("");
  }

  private static void assertType(String path, Http.Response r) {
    assertEquals(200, r.status(), path + " answers " + r.status() + ": " + r.body());
    String ext = path.substring(path.lastIndexOf('.') + 1);
    String expected = TYPES.get(ext);
    assertTrue(expected != null, "unexpected kind of asset " + path);
    String type = contentType(r);
    boolean ok = type.startsWith(expected) || (ext.equals("js") && type.startsWith("text/javascript"));
    assertTrue(ok, path + " is served as '" + type + "', expected " + expected);
    if (!ext.equals("svg")) assertTrue(type.toLowerCase().contains("charset=utf-8"), path + " has no UTF-8 charset: " + type);
    assertEquals("nosniff", r.headers().firstValue("X-Content-Type-Options").orElse(""), path);
  }

  @Test
  void consolePageAndEveryReferencedAssetAreServedWithTheirContentType() {
    for (String entry : new String[] {"/console", "/console/", "/console/index.html"}) {
      Http.Response page = http.get(entry);
      assertEquals(200, page.status(), entry);
      assertTrue(contentType(page).startsWith("text/html"), entry + ": " + contentType(page));
      assertTrue(page.body().contains("<script type=\"module\" src=\"/console/js/app.js\">"), entry);
      String csp = page.headers().firstValue("Content-Security-Policy").orElse("");
      assertTrue(csp.contains("default-src 'self'") && csp.contains("connect-src 'self'"), "CSP: " + csp);
      assertTrue(page.headers().firstValue("Cache-Control").orElse("").contains("no-cache"));
    }
    String html = http.get("/console").body();
    Set<String> seen = new LinkedHashSet<>();
    Deque<String> todo = new ArrayDeque<>();
    Matcher m = HTML_REF.matcher(html);
    while (m.find()) todo.add(m.group(1));
    assertTrue(todo.contains("/console/console.css") && todo.contains("/console/js/app.js"), "index refs: " + todo);
    while (!todo.isEmpty()) {
      String path = todo.poll();
      if (!seen.add(path)) continue;
      Http.Response r = http.get(path);
      assertType(path, r);
      if (path.endsWith(".js")) {
        Matcher im = JS_IMPORT.matcher(r.body());
        while (im.find()) {
          String ref = im.group(1) != null ? im.group(1) : im.group(2);
          assertTrue(ref.startsWith("./") || ref.startsWith("../"), path + " imports a non-relative module " + ref);
          todo.add(Path.of(path).resolveSibling(ref).normalize().toString().replace('\\', '/'));
        }
      }
      if (path.endsWith(".css")) {
        assertTrue(!r.body().contains("url(http") && !r.body().contains("@import"), path + " loads something external");
      }
    }
    // The page, its stylesheet, its icon and all modules (app, api, dom, charts, store, 4 views).
    assertTrue(seen.size() >= 11, "assets found: " + seen);
    for (String p : seen) {
      String body = http.get(p).body();
      assertTrue(!body.contains("http://") || p.endsWith(".svg") || body.contains("http://www.w3.org/2000/svg"),
          p + " refers to an external http:// resource");
      assertTrue(!body.contains("https://"), p + " refers to an external https:// resource");
    }
  }

  @Test
  void unknownFilesAndTraversalAnswerJson404AndTheApiStaysProtected() {
    for (String p : new String[] {"/console/nope.js", "/console/js/../../reference.conf", "/console/%2e%2e/reference.conf",
        "/console/js/", "/console/../v1/jobs"}) {
      Http.Response r = http.get(p);
      assertTrue(r.status() == 404 || r.status() == 400 || r.status() == 401, p + " answers " + r.status() + ": " + r.body());
      assertTrue(!r.body().contains("agentscope"), p + " leaked a class-path file");
    }
    assertEquals(404, http.get("/console/nope.js").status());
    assertEquals(405, http.post("/console", "{}").status());
    assertEquals(401, http.get("/v1/models/some-agent").status(), "reads are protected on this node");
  }
}
