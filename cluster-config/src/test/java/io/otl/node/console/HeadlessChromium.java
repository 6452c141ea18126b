package io.otl.node.console;

import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.junit.jupiter.api.Assumptions;

/**
 * Debian's {@code /usr/bin/chromium}, headless, driven over the DevTools protocol with the JDK's
 * WebSocket client (no driver, no extra dependency). Missing browser: the test fails when
 * {@code OTL_REQUIRE_BROWSER} is set (CI installs it), else it is skipped loudly.
 */
final class HeadlessChromium implements AutoCloseable {
  static final Path BINARY = Path.of(System.getenv().getOrDefault("OTL_CHROMIUM", "/usr/bin/chromium"));
  static final Path SCREENSHOTS = Path.of("target", "console-screenshots");
  private static final ObjectMapper JSON = new ObjectMapper();

  private final Process process;
  private final Path profile;
  private final WebSocket socket;
  private final AtomicInteger ids = new AtomicInteger();
  private final Map<Integer, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
  /** JavaScript exceptions and console/log errors of the page, for the test to check. */
  final List<String> pageErrors = Collections.synchronizedList(new ArrayList<>());

  /** Skips (or fails, with OTL_REQUIRE_BROWSER) when there is no browser. */
  static void requireBrowser() {
    if (Files.isExecutable(BINARY)) return;
    String message = BINARY + " is missing: install Debian's browser with `apt-get install -y chromium` "
        + "(.ci/run does) to run the console browser tests";
    if (System.getenv("OTL_REQUIRE_BROWSER") != null) fail(message + " — OTL_REQUIRE_BROWSER is set");
    System.err.println("!!! SKIPPING console browser tests: " + message);
    Assumptions.abort(message);
  }

  static HeadlessChromium launch(int width, int height) throws Exception {
    requireBrowser();
    Path profile = Files.createTempDirectory("otl-chromium-");
    Process p = new ProcessBuilder(BINARY.toString(),
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
        "--disable-extensions", "--disable-dev-shm-usage", "--mute-audio", "--hide-scrollbars",
        "--window-size=" + width + "," + height,
        "--user-data-dir=" + profile, "--remote-debugging-port=0", "about:blank")
        .redirectErrorStream(true)
        .redirectOutput(profile.resolveSibling(profile.getFileName() + ".log").toFile())
        .start();
    try {
      Path portFile = profile.resolve("DevToolsActivePort");
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!(Files.exists(portFile) && Files.readAllLines(portFile).size() >= 2)) {
        if (!p.isAlive()) fail("chromium exited with " + p.exitValue() + " before DevTools was up");
        if (System.nanoTime() > deadline) fail("chromium did not open DevTools within 60 s");
        Thread.sleep(100);
      }
      int port = Integer.parseInt(Files.readAllLines(portFile).get(0).trim());
      HttpClient http = HttpClient.newHttpClient();
      String pageWs = null;
      for (int i = 0; i < 100 && pageWs == null; i++) {
        JsonNode targets = JSON.readTree(http.send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + port + "/json/list")).build(), HttpResponse.BodyHandlers.ofString()).body());
        for (JsonNode t : targets) {
          if ("page".equals(t.path("type").asText())) pageWs = t.path("webSocketDebuggerUrl").asText();
        }
        if (pageWs == null) Thread.sleep(100);
      }
      if (pageWs == null) fail("chromium has no page target");
      return new HeadlessChromium(p, profile, http, pageWs);
    } catch (Exception | Error e) {
      p.destroyForcibly();
      throw e;
    }
  }

  private HeadlessChromium(Process process, Path profile, HttpClient http, String pageWs) throws Exception {
    this.process = process;
    this.profile = profile;
    this.socket = http.newWebSocketBuilder().connectTimeout(Duration.ofSeconds(10))
        .buildAsync(URI.create(pageWs), new Listener(this::onMessage)).get(30, TimeUnit.SECONDS);
    call("Page.enable", null);
    call("Runtime.enable", null);
    call("Log.enable", null);
  }

  private void onMessage(JsonNode msg) {
    if (msg.has("id")) {
      CompletableFuture<JsonNode> f = pending.remove(msg.get("id").asInt());
      if (f != null) f.complete(msg);
      return;
    }
    String method = msg.path("method").asText();
    JsonNode params = msg.path("params");
    if (method.equals("Runtime.exceptionThrown")) {
      JsonNode d = params.path("exceptionDetails");
      pageErrors.add("exception: " + d.path("exception").path("description").asText(d.path("text").asText()));
    } else if (method.equals("Log.entryAdded")) {
      JsonNode e = params.path("entry");
      // A failed fetch (401/404 the console handles) is logged by the network layer: not a page error.
      if (e.path("level").asText().equals("error") && !e.path("source").asText().equals("network")) {
        pageErrors.add("log " + e.path("source").asText() + ": " + e.path("text").asText());
      }
    } else if (method.equals("Runtime.consoleAPICalled") && params.path("type").asText().equals("error")) {
      pageErrors.add("console.error: " + params.path("args").toString());
    }
  }

  JsonNode call(String method, ObjectNode params) throws Exception {
    int id = ids.incrementAndGet();
    ObjectNode msg = JSON.createObjectNode().put("id", id).put("method", method);
    if (params != null) msg.set("params", params);
    CompletableFuture<JsonNode> f = new CompletableFuture<>();
    pending.put(id, f);
    socket.sendText(JSON.writeValueAsString(msg), true).get(10, TimeUnit.SECONDS);
    JsonNode reply = f.get(60, TimeUnit.SECONDS);
    if (reply.has("error")) throw new IllegalStateException(method + " failed: " + reply.get("error"));
    return reply.path("result");
  }

  /** Evaluates an expression in the page; answers its JSON value (promises are awaited). */
  JsonNode eval(String expression) throws Exception {
    JsonNode r = call("Runtime.evaluate", JSON.createObjectNode().put("expression", expression)
        .put("returnByValue", true).put("awaitPromise", true));
    if (r.has("exceptionDetails")) throw new IllegalStateException("evaluation of `" + expression + "` threw " + r.get("exceptionDetails"));
    return r.path("result").path("value");
  }

  void navigate(String url) throws Exception {
    call("Page.navigate", JSON.createObjectNode().put("url", url));
  }

  /** Waits until a boolean expression holds in the page; fails with the page's text otherwise. */
  void waitFor(String condition, Duration timeout) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        if (eval("!!(" + condition + ")").asBoolean()) return;
      } catch (IllegalStateException e) {
        // page in the middle of loading; try again
      }
      if (System.nanoTime() > deadline) {
        fail("page never satisfied `" + condition + "` within " + timeout.toSeconds() + " s; it shows:\n" + text());
      }
      Thread.sleep(100);
    }
  }

  /** The visible text of the page. */
  String text() throws Exception {
    return eval("document.body ? document.body.innerText : ''").asText();
  }

  /** A PNG of the whole page (up to 6000 px tall) under target/console-screenshots. */
  Path screenshot(String name) throws Exception {
    int height = Math.min(6000, Math.max(600, eval("document.documentElement.scrollHeight").asInt()));
    int width = Math.max(1280, eval("document.documentElement.scrollWidth").asInt());
    call("Emulation.setDeviceMetricsOverride", JSON.createObjectNode().put("width", width).put("height", height)
        .put("deviceScaleFactor", 1).put("mobile", false));
    Thread.sleep(200);
    JsonNode r = call("Page.captureScreenshot", JSON.createObjectNode().put("format", "png"));
    call("Emulation.clearDeviceMetricsOverride", null);
    Files.createDirectories(SCREENSHOTS);
    Path file = SCREENSHOTS.resolve(name + ".png");
    Files.write(file, Base64.getDecoder().decode(r.path("data").asText()));
    return file;
  }

  @Override
  public void close() {
    try {
      socket.sendClose(WebSocket.NORMAL_CLOSURE, "done").get(2, TimeUnit.SECONDS);
    } catch (Exception ignored) {
      // the browser goes away below anyway
    }
    // Chromium's helpers (network service, GPU, zygote) outlive the main process by a moment and keep
    // writing the profile: they go first, or the walk below meets a file that vanished (a CI run failed so).
    java.util.List<ProcessHandle> helpers = process.descendants().toList();
    helpers.forEach(ProcessHandle::destroy);
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      for (ProcessHandle h : helpers) {
        try {
          h.onExit().get(5, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
          h.destroyForcibly();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try (var files = Files.walk(profile)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
    } catch (IOException | java.io.UncheckedIOException ignored) {
      // a temp folder (or part of it) left behind is harmless
    }
  }

  /** Reassembles fragmented text frames into JSON messages. */
  private static final class Listener implements WebSocket.Listener {
    private final Consumer<JsonNode> sink;
    private final StringBuilder buffer = new StringBuilder();

    Listener(Consumer<JsonNode> sink) {
      this.sink = sink;
    }

    @Override
    public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
      buffer.append(data);
      if (last) {
        try {
          sink.accept(JSON.readTree(buffer.toString()));
        } catch (IOException e) {
          // not JSON: ignore
        }
        buffer.setLength(0);
      }
      ws.request(1);
      return null;
    }
  }
}
