package io.otl.node.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The console's job pages, training pool and an automatic rollback's test figures, in a headless
 * browser against a real node (H2 journal) whose jobs run on the Trinity simulator and whose
 * versions are served as LoRA adapters by the simulator's model face. Everything on screen is
 * compared with what the node's own API answers, so the console cannot drift from the node.
 *
 * <p>The scenario, all through public APIs: a hand-registered v1 canaries against v0 at 50 %; the
 * model server is made to fail v1's tasks, and the agent's reported results roll v1 back
 * automatically with its test figures. Then four manual jobs: one SUCCEEDS (finished on cue by
 * the simulator, whose jobs otherwise run for an hour), one FAILS (failure injected into the
 * simulator), one is CANCELLED through the API, one stays RUNNING.
 *
 * <p>The only double is the injected failure: the browser talks to the node through a forwarding
 * proxy (test code) that answers 503 for one agent's models, as a node whose journal is down does.
 */
class ConsoleJobsAndRolloutBrowserTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String AGENT = "travel-planner";
  static final String BROKEN = "broken-agent";
  static final String FAILED_ANSWER = "I cannot complete this task.";
  static final Duration WAIT = Duration.ofSeconds(30);

  static ActorTestKit kit;
  static TrinitySimulator simulator;
  static TrainingNode node;
  static HttpServer proxy;
  static Http api;
  static Http sim;
  static String base;
  static String succeeded;
  static String failed;
  static String cancelled;
  static String running;

  @BeforeAll
  static void start() throws Exception {
    HeadlessChromium.requireBrowser();
    Path dir = TestDatabases.outputDir("console-jobs");
    kit = ActorTestKit.create("console-simulator");
    // Jobs run for an hour unless finished on cue: the RUNNING one stays so while the browser looks.
    simulator = TrinitySimulator.start(kit.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(dir.resolve("simulator")).withDurations(Duration.ofMillis(200), Duration.ofHours(1)));
    sim = new Http(simulator.port());
    node = TrainingNode.start(ConfigFactory.parseMap(Map.ofEntries(
            Map.entry("agentscope.training.read-side.rescan-interval", "1s"),
            Map.entry("agentscope.training.serving.backend", "vllm-lora"),
            Map.entry("agentscope.training.serving.vllm.url", simulator.baseUrl()),
            Map.entry("agentscope.training.serving.retry.min-backoff", "100ms"),
            Map.entry("agentscope.training.training-runner.trinity-endpoint", simulator.baseUrl()),
            Map.entry("agentscope.training.training-runner.trigger.type", "threshold"),
            Map.entry("agentscope.training.training-runner.trigger.min-samples", 1000),
            Map.entry("agentscope.training.training-runner.poll-interval", "200ms"),
            Map.entry("agentscope.training.model-update.canary-ratio", 0.5),
            Map.entry("agentscope.training.model-update.steps", List.of(0.75, 1.0)),
            Map.entry("agentscope.training.model-update.min-samples-per-step", 30),
            Map.entry("agentscope.training.model-update.evaluation-metrics", List.of("task-success-rate"))))
        .withFallback(TestDatabases.node(TestDatabases.h2(dir), true)));
    api = new Http(node.httpPort());
    proxy = startProxy(node.httpPort());
    base = "http://127.0.0.1:" + proxy.getAddress().getPort();
    rollBackAWorseVersion(dir);
    runJobsInEveryState();
  }

  @AfterAll
  static void stop() {
    if (proxy != null) proxy.stop(0);
    if (node != null) node.close();
    if (simulator != null) simulator.stop();
    if (kit != null) kit.shutdownTestKit();
  }

  /**
   * Forwards every request to the node, except the models of {@link #BROKEN}: 503 with
   * Retry-After and the node's error shape (the injected failure).
   */
  static HttpServer startProxy(int nodePort) throws Exception {
    HttpClient client = HttpClient.newHttpClient();
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", exchange -> {
      try (exchange) {
        String target = exchange.getRequestURI().getRawPath()
            + (exchange.getRequestURI().getRawQuery() == null ? "" : "?" + exchange.getRequestURI().getRawQuery());
        if (exchange.getRequestURI().getPath().equals("/v1/models/" + BROKEN)) {
          exchange.getResponseHeaders().add("Retry-After", "5");
          reply(exchange, 503, "application/json",
              "{\"error\":\"unavailable\",\"message\":\"the journal did not answer within 5s\"}".getBytes(StandardCharsets.UTF_8));
          return;
        }
        byte[] body = exchange.getRequestBody().readAllBytes();
        HttpRequest.Builder out = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + nodePort + target))
            .method(exchange.getRequestMethod(), body.length == 0 ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofByteArray(body));
        for (String h : List.of("Content-Type", "Accept", "Authorization")) {
          String v = exchange.getRequestHeaders().getFirst(h);
          if (v != null) out.header(h, v);
        }
        HttpResponse<byte[]> r = client.send(out.build(), HttpResponse.BodyHandlers.ofByteArray());
        reply(exchange, r.statusCode(), r.headers().firstValue("Content-Type").orElse("application/octet-stream"), r.body());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    server.start();
    return server;
  }

  private static void reply(HttpExchange exchange, int status, String contentType, byte[] body) throws java.io.IOException {
    exchange.getResponseHeaders().set("Content-Type", contentType);
    exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
    if (body.length > 0) {
      try (OutputStream os = exchange.getResponseBody()) {
        os.write(body);
      }
    }
  }

  /** v1 canaries against v0; the model server fails v1's tasks; the agent's results roll it back. */
  static void rollBackAWorseVersion(Path dir) throws Exception {
    Path adapter = Files.createDirectories(dir.resolve("ckpt/v1/huggingface"));
    Http.Response reg = api.post("/v1/models/" + AGENT + "/versions", "{\"version\":\"v1\",\"artifact\":\"file://"
        + adapter.toAbsolutePath() + "\",\"endpoint\":\"http://unused.invalid/v1\"}");
    assertEquals(201, reg.status(), reg.body());
    JsonNode v1 = await("v1 in CANARY", () -> version("v1"), v -> v.path("state").asText().equals("CANARY"));
    String served = v1.path("deployment").path("servedModel").asText();
    assertEquals(200, sim.post("/simulator/models/" + served + "/quality", "{\"failureRate\":1.0}").status());
    for (int i = 0; i < 400 && version("v1").path("state").asText().equals("CANARY"); i++) {
      String session = "trip-" + i;
      JsonNode route = api.get("/v1/models/" + AGENT + "/route?sessionId=" + session).json();
      String question = "plan trip " + i;
      HttpResponse<String> chat = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
              URI.create(route.path("endpoint").asText() + "/chat/completions"))
          .header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(JSON.createObjectNode().put("model", route.path("servedModel").asText())
              .set("messages", JSON.createArrayNode().add(JSON.createObjectNode().put("role", "user").put("content", question)))
              .toString())).build(), HttpResponse.BodyHandlers.ofString());
      // The rollback, driven by the results sent so far, can land between the route and this call: the
      // adapter is then unloaded and the model server says 404 for it (CI, session 45).
      if (chat.statusCode() == 404 && !version("v1").path("state").asText().equals("CANARY")) break;
      assertEquals(200, chat.statusCode(), chat.body());
      String content = JSON.readTree(chat.body()).path("choices").path(0).path("message").path("content").asText();
      boolean success = !content.equals(FAILED_ANSWER);
      Http.Response r = api.post("/v1/sessions/" + session + "/events", JSON.writeValueAsString(Map.of(
          "agentId", AGENT, "events", List.of(
              Map.of("type", "start", "modelVersion", route.path("version").asText()),
              Map.of("type", "message", "role", "user", "content", question),
              Map.of("type", "message", "role", "assistant", "content", content, "latencyMs", 300),
              Map.of("type", "result", "status", success ? "SUCCESS" : "FAILURE")))));
      assertEquals(202, r.status(), r.body());
    }
    await("v1 rolled back", () -> version("v1"), v -> v.path("state").asText().equals("ROLLED_BACK"));
  }

  /** Four manual jobs, one after the other (one active job per agent): each ends in its own state. */
  static void runJobsInEveryState() throws Exception {
    succeeded = triggerRunning("ok");
    JsonNode finish = sim.post("/simulator/jobs/" + externalId(succeeded) + "/finish", null).json();
    assertTrue(finish.path("finished").asBoolean(), finish.toString());
    awaitJob(succeeded, "SUCCEEDED");
    // Its output canaries (the base model has no offline baseline to gate it on), and one rollout at
    // a time refuses the next manual job meanwhile: an operator rolls it back by hand.
    String output = await(succeeded + "'s output in CANARY", () -> versionFrom(succeeded),
        v -> v.path("state").asText().equals("CANARY")).path("version").asText();
    Http.Response rollback = api.post("/v1/models/" + AGENT + "/versions/" + output + "/rollback",
        "{\"reason\":\"a manual job of the console test follows\"}");
    assertEquals(202, rollback.status(), rollback.body());
    await(output + " rolled back", () -> version(output), v -> v.path("state").asText().equals("ROLLED_BACK"));

    failed = triggerRunning("fail");
    assertEquals(200, sim.post("/simulator/jobs/" + externalId(failed) + "/fail", null).status());
    awaitJob(failed, "FAILED");

    cancelled = triggerRunning("cancel");
    Http.Response cancel = api.post("/v1/jobs/" + cancelled + "/cancel", null);
    assertEquals(202, cancel.status(), cancel.body());
    awaitJob(cancelled, "CANCELLED");

    running = triggerRunning("run");
    // A few more completed sessions: the pool the card shows next to the running job.
    int before = api.get("/v1/training/" + AGENT).json().path("poolSize").asInt();
    completeSessions("pool", 4);
    await("the pool to grow by 4", () -> api.get("/v1/training/" + AGENT).json(),
        t -> t.path("poolSize").asInt() >= before + 4);
  }

  static void completeSessions(String prefix, int n) {
    for (int i = 0; i < n; i++) {
      Http.Response r = api.post("/v1/sessions/" + prefix + "-" + i + "/events", """
          {"agentId":"%s","events":[{"type":"start","modelVersion":"v0"},
            {"type":"message","role":"user","content":"question %d"},
            {"type":"message","role":"assistant","content":"answer %d","latencyMs":400},
            {"type":"result","status":"SUCCESS"}]}""".formatted(AGENT, i, i));
      assertEquals(202, r.status(), r.body());
    }
  }

  /** Fills the pool, triggers a manual job and waits until the simulator runs it. */
  static String triggerRunning(String prefix) throws Exception {
    // Counted from the pool before them: "at least 3" was met by a pool a cancelled job gave back, the
    // trigger then ran before these sessions arrived, and they grew the pool while the browser looked.
    int before = api.get("/v1/training/" + AGENT).json().path("poolSize").asInt();
    completeSessions(prefix, 3);
    await("the pool to hold the " + prefix + " sessions", () -> api.get("/v1/training/" + AGENT).json(),
        t -> t.path("poolSize").asInt() >= before + 3 && t.path("activeJob").isNull());
    Http.Response trigger = api.post("/v1/training/" + AGENT + "/trigger", null);
    assertEquals(202, trigger.status(), trigger.body());
    String jobId = trigger.json().path("jobId").asText();
    awaitJob(jobId, "RUNNING");
    return jobId;
  }

  static String externalId(String jobId) {
    return api.get("/v1/jobs/" + jobId).json().path("backend").path("externalId").asText();
  }

  static JsonNode awaitJob(String jobId, String status) throws InterruptedException {
    return await(jobId + " " + status, () -> api.get("/v1/jobs/" + jobId).json(),
        j -> j.path("status").asText().equals(status));
  }

  /** The version a job's output was registered as (its name is only final once handed over), or null. */
  static JsonNode versionFrom(String jobId) {
    for (JsonNode x : api.get("/v1/models/" + AGENT).json().path("versions")) {
      if (x.path("sourceJobId").asText().equals(jobId)) return x;
    }
    return null;
  }

  static JsonNode version(String v) {
    for (JsonNode x : api.get("/v1/models/" + AGENT).json().path("versions")) {
      if (x.path("version").asText().equals(v)) return x;
    }
    throw new AssertionError("no version " + v);
  }

  static <T> T await(String what, Supplier<T> probe, Predicate<T> done) throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    T last = null;
    while (System.nanoTime() < deadline) {
      last = probe.get();
      if (last != null && done.test(last)) return last;
      Thread.sleep(100);
    }
    throw new AssertionError("timed out waiting for " + what + "; last: " + last);
  }

  private static String text(HeadlessChromium browser, String selector) throws Exception {
    return browser.eval("document.querySelector('" + selector + "').innerText").asText();
  }

  private static int count(HeadlessChromium browser, String selector) throws Exception {
    return browser.eval("document.querySelectorAll('" + selector + "').length").asInt();
  }

  @Test
  void jobsInEveryStatePoolAutomaticRollbackFiguresAnd503AreShownAsTheNodeAnswers() throws Exception {
    JsonNode training = api.get("/v1/training/" + AGENT).json();
    JsonNode models = api.get("/v1/models/" + AGENT).json();
    try (HeadlessChromium browser = HeadlessChromium.launch(1400, 1000)) {
      // Agents: found from the job list; one more added by URL whose models answer 503.
      browser.navigate(base + "/console/?agent=" + BROKEN + "#/agents");
      String card = "[data-agent=\"" + AGENT + "\"]";
      browser.waitFor("document.querySelector('" + card + " [data-field=\"pool\"]')", WAIT);
      browser.waitFor("document.querySelector('[data-agent=\"" + BROKEN + "\"]')", WAIT);
      String agent = text(browser, card);
      int pool = training.path("poolSize").asInt();
      assertTrue(agent.contains(pool + " / " + training.path("minSamples").asInt()), agent);
      assertEquals(String.valueOf(training.path("minSamples").asInt()),
          browser.eval("document.querySelector('" + card + " [role=progressbar]').getAttribute('aria-valuemax')").asText());
      assertTrue(agent.contains(running + " RUNNING"), agent);
      assertEquals(running, training.path("activeJob").path("jobId").asText(), training.toString());
      assertTrue(agent.contains(models.path("stable").asText() + " STABLE"), agent);
      String broken = text(browser, "[data-agent=\"" + BROKEN + "\"]");
      assertTrue(broken.contains("The node is unavailable (503)") && broken.contains("the journal did not answer within 5s"), broken);
      assertTrue(browser.eval("!document.getElementById('banner').hidden").asBoolean(), "503 also in the banner");
      browser.screenshot("jobs-01-agents");

      // Auto-refresh every 5 s, and pausing it.
      String first = browser.eval("document.querySelector('.page').dataset.rendered").asText();
      browser.waitFor("document.querySelector('.page').dataset.rendered !== '" + first + "'", Duration.ofSeconds(12));
      browser.eval("document.getElementById('refresh-toggle').click(); true");
      assertEquals("Resume", browser.eval("document.getElementById('refresh-toggle').textContent").asText());
      // A render started before the click may still land: wait for none in flight, then for two
      // timer ticks while paused. Had a tick rendered, the render would have begun in that tick and,
      // once none is in flight again, be on the page; so an unchanged page proves the pause.
      String probe = "window.otlRefreshProbe";
      browser.waitFor(probe + ".rendersInFlight === 0", WAIT);
      String paused = browser.eval("document.querySelector('.page').dataset.rendered").asText();
      int ticks = browser.eval(probe + ".ticks").asInt();
      browser.waitFor(probe + ".ticks >= " + (ticks + 2) + " && " + probe + ".rendersInFlight === 0", WAIT);
      assertEquals(paused, browser.eval("document.querySelector('.page').dataset.rendered").asText(), "refreshed while paused");
      browser.eval("document.getElementById('refresh-toggle').click(); true");

      // Jobs table: one row per job the node lists, each as the node answers it.
      JsonNode jobs = api.get("/v1/jobs?agentId=" + AGENT).json().path("jobs");
      assertEquals(4, jobs.size(), jobs.toString());
      browser.navigate(base + "/console/#/jobs");
      browser.waitFor("document.querySelectorAll('tr[data-job]').length === 4", WAIT);
      for (JsonNode job : jobs) {
        String row = text(browser, "tr[data-job=\"" + job.path("jobId").asText() + "\"]");
        assertTrue(row.contains(job.path("status").asText()) && row.contains(job.path("trigger").asText())
            && row.contains(job.path("algorithm").asText()) && row.contains(job.path("dataset").path("count").asText()), row);
        if (!job.path("error").isNull()) {
          assertTrue(row.contains(job.path("error").asText().lines().findFirst().orElseThrow()), row + " vs " + job);
        }
      }
      List<String> states = jobs.findValuesAsText("status");
      assertTrue(states.containsAll(List.of("SUCCEEDED", "FAILED", "CANCELLED", "RUNNING")), states.toString());
      browser.screenshot("jobs-02-jobs");

      // The failed job: its error, history and every audit event the node records.
      JsonNode failedJob = api.get("/v1/jobs/" + failed).json();
      assertTrue(failedJob.path("error").asText().contains("failure injected"), failedJob.toString());
      int events = api.get("/v1/audit/job/" + failed).json().path("events").size();
      assertTrue(events >= 4, "requested, submitted, running, failed: " + events);
      browser.navigate(base + "/console/#/jobs/" + failed);
      browser.waitFor("document.querySelectorAll('table.audit tbody tr').length === " + events, WAIT);
      assertTrue(text(browser, "[data-field=\"error\"]").contains("failure injected"));
      assertEquals(failedJob.path("history").size(), count(browser, "ol.timeline li"));
      String job = browser.text();
      assertTrue(job.contains("FAILED") && job.contains(failedJob.path("backend").path("externalId").asText()), job);
      browser.screenshot("jobs-03-failed-job");
      browser.navigate(base + "/console/#/jobs/" + succeeded);
      browser.waitFor("document.querySelector('[data-field=\"status\"]') && document.body.innerText.includes('Output model')", WAIT);
      JsonNode output = api.get("/v1/jobs/" + succeeded).json().path("outputModel");
      assertTrue(browser.text().contains(output.path("checkpointUri").asText()), output.toString());
      // The job's pre-flight warnings (its small dataset), each as the API answers it.
      JsonNode warnings = api.get("/v1/jobs/" + succeeded).json().path("warnings");
      assertEquals(warnings.size(), count(browser, "[data-field=\"warnings\"] li"), warnings.toString());
      for (JsonNode w : warnings) assertTrue(browser.text().contains(w.asText()), w.asText());
      // Training visible: the trainer's step/loss points and its log, as GET /v1/jobs/{id}/logs answers them.
      JsonNode logs = api.get("/v1/jobs/" + succeeded + "/logs").json();
      JsonNode lines = logs.path("lines");
      assertTrue(logs.path("points").size() >= 1 && lines.size() >= 1, logs.toString());
      browser.waitFor("document.querySelector('[data-field=\"loss-points\"]')", WAIT);
      assertEquals(logs.path("points").size(),
          browser.eval("Number(document.querySelector('[data-field=\"loss-points\"]').dataset.count)").asInt());
      String shownLog = text(browser, "[data-field=\"logs\"]");
      assertTrue(shownLog.contains(lines.get(lines.size() - 1).asText()), shownLog);
      // Present is not seen: the section once took the pool bar's class and showed a 10 px sliver.
      assertEquals("visible", browser.eval(unclipped("[data-field=\"loss-points\"]")).asText());
      assertEquals("visible", browser.eval(unclipped("[data-field=\"logs\"]")).asText());

      // Models: v1's automatic rollback with the figures of its VersionRolledBack event.
      JsonNode rolledBack = null;
      for (JsonNode e : api.get("/v1/audit/model/" + AGENT).json().path("events")) {
        if (e.path("type").asText().equals("VersionRolledBack") && e.path("event").path("version").asText().equals("v1")) {
          rolledBack = e.path("event");
        }
      }
      assertTrue(rolledBack != null && rolledBack.path("automatic").asBoolean(), "an automatic rollback of v1 in the audit");
      browser.navigate(base + "/console/#/models/" + AGENT);
      browser.waitFor("document.querySelector('.rollback[data-version=\"v1\"] tr[data-metric]')", WAIT);
      assertEquals(rolledBack.path("reason").asText(),
          text(browser, ".rollback[data-version=\"v1\"] [data-field=\"rollback-reason\"]"));
      assertTrue(text(browser, ".rollback[data-version=\"v1\"]").contains("Automatic rollback"));
      int degraded = 0;
      int exponents = 0;
      for (JsonNode t : rolledBack.path("tests")) {
        String row = text(browser, ".rollback[data-version=\"v1\"] tr[data-metric=\"" + t.path("metric").asText() + "\"]");
        assertTrue(row.contains("(n=" + t.path("stableSamples").asLong() + ")")
            && row.contains("(n=" + t.path("candidateSamples").asLong() + ")"), row + " vs " + t);
        assertEquals(t.path("degraded").asBoolean(), row.contains("DEGRADED"), row);
        if (t.path("degraded").asBoolean()) degraded++;
        // The always-valid p-value as the audit's text timeline prints it: a clear rollback's p (2.4e-18 in
        // trial t149) read "always-valid p 0" here, fixed to four decimals, while the timeline said 2.4e-18.
        double p = t.path("pValue").asDouble();
        if (t.path("method").asText().equals("msprt") && p > 0 && p < 1e-3) {
          exponents++;
          assertTrue(row.contains("always-valid p " + String.format(java.util.Locale.ROOT, "%.1e", p)
              .replaceAll("e([+-])0*(\\d)", "e$1$2").replace("e+", "e") + " vs"), p + " in " + row);
        }
      }
      assertTrue(degraded >= 1, rolledBack.toString());
      // The scenario's clear rollback decides with a p far below 0.001: the exponent's branch was shown.
      assertTrue(exponents >= 1, "an always-valid p below 0.001 among " + rolledBack.path("tests"));
      assertEquals(degraded, count(browser, ".rollback[data-version=\"v1\"] tr.degraded"));
      String chart = ".rollout[data-candidate=\"v1\"] figure[data-metric=\"task-success-rate\"] ";
      assertEquals(1, count(browser, chart + "path.series.candidate"));
      assertEquals(1, count(browser, chart + "path.series.stable"));
      assertEquals(1, count(browser, chart + "polygon.band"));
      assertTrue(count(browser, chart + ".marker.degraded") >= 1, "the failed test is marked on the chart");
      for (JsonNode v : models.path("versions")) {
        assertEquals(v.path("state").asText(), text(browser,
            "tr[data-version=\"" + v.path("version").asText() + "\"] [data-field=\"state\"]").trim(), v.toString());
        // Where the version is served, as its route names it: the deployment's model server and served
        // model. v1 was registered with an endpoint vllm-lora never calls; a job's version with its
        // checkpoint URI: the page showed those as the endpoint.
        JsonNode deployment = v.path("deployment");
        String serving = text(browser, "tr[data-version=\"" + v.path("version").asText() + "\"] [data-field=\"serving\"]");
        assertTrue(serving.contains(deployment.path("servedModel").asText() + " at " + deployment.path("endpoint").asText()),
            serving + " vs " + v);
        assertFalse(serving.contains("unused.invalid"), serving);
      }
      assertFalse(browser.text().contains("undefined"), "a field the console expects is missing from the node's answer");
      browser.screenshot("jobs-04-models");

      assertTrue(browser.pageErrors.isEmpty(), "page errors: " + browser.pageErrors);
    }
  }

  /** A script answering "visible", or which ancestor cuts the element {@code selector} off (overflow). */
  private static String unclipped(String selector) {
    return "(() => { const el = document.querySelector('" + selector + "'); const r = el.getBoundingClientRect();"
        + " if (r.height < 1) return 'no height';"
        + " for (let a = el.parentElement; a; a = a.parentElement) { const s = getComputedStyle(a);"
        + " if (s.overflowY === 'visible' && s.overflowX === 'visible') continue;"
        + " const ar = a.getBoundingClientRect();"
        + " if (ar.top > r.top + 1 || ar.bottom < r.bottom - 1) return 'cut off by ' + a.tagName + '.' + a.className"
        + " + ' (' + Math.round(ar.height) + ' px high)'; }"
        + " return 'visible'; })()";
  }
}
