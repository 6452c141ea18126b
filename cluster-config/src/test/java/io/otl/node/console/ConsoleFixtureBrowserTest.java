package io.otl.node.console;

import static org.apache.pekko.http.javadsl.server.Directives.complete;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.typesafe.config.ConfigFactory;
import io.otl.http.ConsoleRoutes;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The console's job pages, training pool, audit-driven canary charts and an automatic rollback's
 * test figures, against recorded API answers in the shapes of design §7.1, served by a stub next
 * to the real {@link ConsoleRoutes}. Also covers 503 handling and auto-refresh.
 *
 * <p>Why recorded answers and not a real node (which does serve these routes, and which
 * {@link ConsoleBrowserTest} drives): this page set needs, at one time, jobs in every state, a
 * three-hour canary history with a latency rollback carrying chosen figures, and API answers that
 * turn into 503 on demand. A node reaches the first two only through a long scenario (a
 * hand-moved clock, a Trinity backend that fails and is cancelled on cue, hundreds of routed
 * sessions; not written yet), and the third is an injected failure. Known gap until then: nothing
 * checks that these recorded shapes still match the node's answers (issue #21).
 */
class ConsoleFixtureBrowserTest {
  static final ObjectMapper JSON = new ObjectMapper();
  static final String AGENT = "travel-planner";
  static final Duration WAIT = Duration.ofSeconds(30);
  static final Instant NOW = Instant.now().truncatedTo(ChronoUnit.SECONDS);
  static final Instant T0 = NOW.minus(3, ChronoUnit.HOURS);
  static final String ROLLBACK_REASON =
      "response-latency degraded: candidate p95 1412 ms vs stable 815 ms (limit 896.5 ms = stable +10%)";

  static final Map<String, HttpResponse> answers = new HashMap<>();
  static ActorSystem<Void> system;
  static ServerBinding binding;
  static String base;

  static String at(long minutes) {
    return T0.plus(minutes, ChronoUnit.MINUTES).toString();
  }

  static void answer(String path, Object body) {
    try {
      answers.put(path, HttpResponse.create().withEntity(ContentTypes.APPLICATION_JSON, JSON.writeValueAsBytes(body)));
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  static ObjectNode parse(String json) {
    try {
      return (ObjectNode) JSON.readTree(json);
    } catch (Exception e) {
      throw new IllegalStateException(json, e);
    }
  }

  @BeforeAll
  static void start() throws Exception {
    HeadlessChromium.requireBrowser();
    recordAnswers();
    system = ActorSystem.create(Behaviors.empty(), "console-fixture", ConfigFactory.parseString(
        "pekko.actor.provider = local\npekko.loglevel = WARNING").withFallback(ConfigFactory.load()));
    binding = Http.get(system).newServerAt("127.0.0.1", 0).bind(concat(
        ConsoleRoutes.route(),
        pathPrefix("v1", () -> extractRequest(req -> {
          HttpResponse r = answers.get(req.getUri().path());
          return complete(r != null ? r : HttpResponse.create().withStatus(StatusCodes.NOT_FOUND)
              .withEntity(ContentTypes.APPLICATION_JSON, "{\"error\":\"not_found\",\"message\":\"no such thing here\"}"));
        })))).toCompletableFuture().get(30, TimeUnit.SECONDS);
    base = "http://127.0.0.1:" + binding.localAddress().getPort();
  }

  @AfterAll
  static void stop() {
    if (system != null) {
      system.terminate();
      system.getWhenTerminated().toCompletableFuture().orTimeout(30, TimeUnit.SECONDS).join();
    }
  }

  static void recordAnswers() {
    String running = """
        {"jobId":"job-3-travel-planner","agentId":"travel-planner","status":"RUNNING","trigger":"threshold","algorithm":"grpo",
         "baseModel":"qwen2.5-7b-instruct","hyperparams":{"learning-rate":2e-5,"batch-size":16,"epochs":3},
         "dataset":{"count":1200,"sha256":"9f2c1e","path":"/data/exports/job-3.jsonl"},
         "backend":{"type":"ray-jobs","externalId":"job-3-travel-planner"},"outputModel":null,"error":null,
         "history":[{"status":"REQUESTED","at":"%s","detail":"pool reached 1200 >= 1000"},
                    {"status":"SUBMITTED","at":"%s","detail":null},{"status":"RUNNING","at":"%s","detail":null}]}
        """.formatted(at(160), at(161), at(165));
    String failed = """
        {"jobId":"job-2-travel-planner","agentId":"travel-planner","status":"FAILED","trigger":"manual","algorithm":"sft",
         "baseModel":"qwen2.5-7b-instruct","hyperparams":{},"dataset":{"count":800,"sha256":"77aa01","path":"/data/exports/job-2.jsonl"},
         "backend":{"type":"ray-jobs","externalId":"job-2-travel-planner"},"outputModel":null,
         "error":"Ray job FAILED: CUDA out of memory at global_step 120",
         "history":[{"status":"REQUESTED","at":"%s","detail":"http"},{"status":"SUBMITTED","at":"%s","detail":null},
                    {"status":"RUNNING","at":"%s","detail":null},{"status":"FAILED","at":"%s","detail":"CUDA out of memory"}]}
        """.formatted(at(60), at(62), at(65), at(110));
    String succeeded = """
        {"jobId":"job-1-travel-planner","agentId":"travel-planner","status":"SUCCEEDED","trigger":"scheduled","algorithm":"dpo",
         "baseModel":"qwen2.5-7b-instruct","hyperparams":{},"dataset":{"count":1000,"sha256":"11bb22","path":"/data/exports/job-1.jsonl"},
         "backend":{"type":"ray-jobs","externalId":"job-1-travel-planner"},
         "outputModel":{"checkpointUri":"file:///ckpt/travel-planner/job-1/global_step_300/actor/huggingface","metrics":{"task-success-rate":0.88},"version":"v8"},
         "error":null,
         "history":[{"status":"REQUESTED","at":"%s","detail":"cron 0 0 2 * * ?"},{"status":"SUBMITTED","at":"%s","detail":null},
                    {"status":"RUNNING","at":"%s","detail":null},{"status":"SUCCEEDED","at":"%s","detail":null}]}
        """.formatted(at(-120), at(-119), at(-115), at(-2));
    ObjectNode jobs = JSON.createObjectNode();
    jobs.putArray("jobs").add(parse(running)).add(parse(failed)).add(parse(succeeded));
    answer("/v1/jobs", jobs);
    answer("/v1/jobs/job-3-travel-planner", parse(running));
    answer("/v1/jobs/job-2-travel-planner", parse(failed));
    answer("/v1/jobs/job-1-travel-planner", parse(succeeded));
    // GET /v1/jobs/{id}/logs (JobLogRoutes / LogPage): Ray's log of the running job, one page.
    answer("/v1/jobs/job-3-travel-planner/logs", parse("""
        {"jobId":"job-3-travel-planner","backend":"ray-jobs","offset":0,"limit":2000,"totalLines":4,"nextOffset":4,
         "lines":["Trinity-RFT running job-3.trinity.yaml","step 1: actor/loss=0.9000","step 2: actor/loss=0.6000",
                  "step 3: actor/loss=0.4500"],
         "points":[{"step":1,"loss":0.9},{"step":2,"loss":0.6},{"step":3,"loss":0.45}],"note":null}"""));
    answer("/v1/training/" + AGENT, parse("""
        {"agentId":"travel-planner","poolSize":640,"minSamples":1000,"triggers":["threshold","scheduled"],
         "nextScheduledRun":"%s","activeJob":{"jobId":"job-3-travel-planner","status":"RUNNING"},"meanQuality":0.82,"backend":"ray-jobs"}
        """.formatted(NOW.plus(5, ChronoUnit.HOURS))));
    answers.put("/v1/models/broken-agent", HttpResponse.create().withStatus(StatusCodes.SERVICE_UNAVAILABLE)
        .withEntity(ContentTypes.APPLICATION_JSON, "{\"error\":\"unavailable\",\"message\":\"the journal did not answer within 5s\"}"));
    answer("/v1/models/" + AGENT, parse("""
        {"agentId":"travel-planner","stable":"v7","candidate":"v9","versions":[
          {"version":"v7","state":"STABLE","ratio":0.95,"artifact":"file:///ckpt/v7","endpoint":"http://infer:8000/v7","sourceJobId":null,
           "manual":true,"registeredAt":"%1$s","metrics":{"offline":{},"online":{"sessions":140,"taskSuccessRate":0.86,"taskSuccessSamples":140,
           "userSatisfaction":0.8,"userSatisfactionSamples":120,"responseLatencyP95Ms":815,"responseLatencySamples":140},"currentStep":null},
           "history":[{"state":"REGISTERED","ratio":null,"at":"%1$s","reason":"registered by hand"},{"state":"STABLE","ratio":1.0,"at":"%1$s","reason":"first version"}]},
          {"version":"v8","state":"ROLLED_BACK","ratio":0.0,"artifact":"file:///ckpt/travel-planner/job-1/global_step_300/actor/huggingface",
           "endpoint":"http://infer:8000/v8","sourceJobId":"job-1-travel-planner","manual":false,"registeredAt":"%2$s",
           "metrics":{"offline":{"task-success-rate":0.88},"online":{"sessions":70,"taskSuccessRate":0.85,"taskSuccessSamples":70,
           "userSatisfaction":0.79,"userSatisfactionSamples":60,"responseLatencyP95Ms":1412,"responseLatencySamples":70},"currentStep":null},
           "history":[{"state":"REGISTERED","ratio":null,"at":"%2$s","reason":null},{"state":"EVALUATING","ratio":null,"at":"%2$s","reason":null},
             {"state":"READY","ratio":null,"at":"%2$s","reason":"offline gate passed"},{"state":"CANARY","ratio":0.05,"at":"%3$s","reason":"auto-deploy"},
             {"state":"RAMP","ratio":0.2,"at":"%4$s","reason":"step passed"},{"state":"ROLLED_BACK","ratio":0.0,"at":"%5$s","reason":"%6$s"}]},
          {"version":"v9","state":"CANARY","ratio":0.05,"artifact":"file:///ckpt/v9","endpoint":"http://infer:8000/v9","sourceJobId":null,
           "manual":true,"registeredAt":"%7$s","metrics":{"offline":{},"online":{"sessions":20,"taskSuccessRate":0.9,"taskSuccessSamples":20,
           "userSatisfaction":0.85,"userSatisfactionSamples":18,"responseLatencyP95Ms":790,"responseLatencySamples":20},
           "currentStep":{"sessions":20,"taskSuccessRate":0.9,"taskSuccessSamples":20,"userSatisfaction":0.85,"userSatisfactionSamples":18,
           "responseLatencyP95Ms":790,"responseLatencySamples":20}},
           "history":[{"state":"REGISTERED","ratio":null,"at":"%7$s","reason":null},{"state":"CANARY","ratio":0.05,"at":"%8$s","reason":"auto-deploy"}]}]}
        """.formatted(at(-600), at(0), at(1), at(41), at(100), ROLLBACK_REASON, at(130), at(131))));
    answer("/v1/audit/model/" + AGENT, modelAudit());
    answer("/v1/audit/job/job-2-travel-planner", parse("""
        {"kind":"job","id":"job-2-travel-planner","next":null,"events":[
          {"seqNr":41,"at":"%s","type":"JobRequested","event":{"jobId":"job-2-travel-planner","trigger":"manual"}},
          {"seqNr":42,"at":"%s","type":"JobSubmitted","event":{"jobId":"job-2-travel-planner","externalId":"job-2-travel-planner"}},
          {"seqNr":43,"at":"%s","type":"JobStatusChanged","event":{"jobId":"job-2-travel-planner","status":"RUNNING","message":null}},
          {"seqNr":44,"at":"%s","type":"JobStatusChanged","event":{"jobId":"job-2-travel-planner","status":"FAILED","message":"CUDA out of memory"}}]}
        """.formatted(at(60), at(62), at(65), at(110))));
  }

  static ObjectNode test(String metric, double stable, double candidate, long ns, long nc, double z, double tolerance,
      boolean relative, double threshold, boolean degraded, String summary) {
    return JSON.createObjectNode().put("metric", metric).put("stableValue", stable).put("candidateValue", candidate)
        .put("stableSamples", ns).put("candidateSamples", nc).put("statistic", z).put("criticalValue", 1.645)
        .put("confidence", 0.95).put("tolerance", tolerance).put("relativeTolerance", relative).put("threshold", threshold)
        .putNull("observedTailShare").put("degraded", degraded).put("summary", summary);
  }

  /** v8's rollout (canary, ramp to 20%, rolled back on latency) and v9's canary, with outcomes. */
  static ObjectNode modelAudit() {
    ObjectNode audit = JSON.createObjectNode().put("kind", "model").put("id", AGENT).putNull("next");
    ArrayNode events = audit.putArray("events");
    int[] seq = {100};
    java.util.function.BiConsumer<Long, ObjectNode> add = (minute, e) -> {
      String type = e.remove("_type").asText();
      e.put("at", at(minute));
      events.addObject().put("seqNr", ++seq[0]).put("at", at(minute)).put("type", type).set("event", e);
    };
    add.accept(0L, JSON.createObjectNode().put("_type", "VersionRegistered").put("version", "v8")
        .put("artifact", "file:///ckpt/v8").put("sourceJobId", "job-1-travel-planner").put("manual", false));
    ObjectNode started = JSON.createObjectNode().put("_type", "RolloutStarted").put("version", "v8").put("stableVersion", "v7")
        .put("reason", "auto-deploy");
    started.putArray("plan").add(0.05).add(0.2).add(0.5).add(1.0);
    add.accept(1L, started);
    Random rnd = new Random(7);
    for (int i = 0; i < 160; i++) {
      long minute = 2 + i * 98L / 160;
      boolean candidate = i % 2 == 0;
      boolean ramp = minute >= 41;
      double latency = candidate ? (ramp ? 1250 + rnd.nextInt(200) : 790 + rnd.nextInt(60)) : 760 + rnd.nextInt(60);
      ObjectNode o = JSON.createObjectNode().put("_type", "OutcomeRecorded").put("sessionId", "s-" + i)
          .put("modelVersion", candidate ? "v8" : "v7").put("success", rnd.nextDouble() < 0.86)
          .put("rating", 3 + rnd.nextInt(3)).put("thumbsUp", rnd.nextDouble() < 0.8 ? 1 : 0).put("thumbsDown", 0)
          .put("latencyP95Ms", latency);
      add.accept(minute, o);
      if (i == 79) {
        ObjectNode step = JSON.createObjectNode().put("_type", "StepAdvanced").put("version", "v8").put("fromStep", 0)
            .put("toStep", 1).put("ratio", 0.2);
        step.putArray("tests").addAll(List.of(
            test("task-success-rate", 0.86, 0.87, 40, 40, -0.3, 0.02, false, 0.84, false, "candidate 0.87 vs stable 0.86: ok"),
            test("user-satisfaction", 0.8, 0.81, 40, 40, -0.2, 0.05, false, 0.75, false, "ok"),
            test("response-latency", 812, 835, 40, 40, 0.4, 0.10, true, 893.2, false, "ok")));
        add.accept(41L, step);
      }
    }
    ObjectNode rolledBack = JSON.createObjectNode().put("_type", "VersionRolledBack").put("version", "v8").put("automatic", true)
        .put("reason", ROLLBACK_REASON).putNull("restoredStable");
    rolledBack.putArray("tests").addAll(List.of(
        test("task-success-rate", 0.86, 0.85, 40, 40, 0.4, 0.02, false, 0.84, false, "candidate 0.85 vs stable 0.86 within 0.02"),
        test("user-satisfaction", 0.8, 0.79, 40, 40, 0.3, 0.05, false, 0.75, false, "within 0.05"),
        test("response-latency", 815, 1412, 40, 40, 6.1, 0.10, true, 896.5, true,
            "candidate p95 1412 ms above the limit 896.5 ms (stable 815 ms +10%)"),
        // a guardrail (issue #19), tested with the sequential method: statistic, level and looks
        test("tokens-per-session", 1500, 1560, 38, 40, -2.1, 0.20, true, 1800, false, "guardrail tokens-per-session ok")
            .put("method", "msprt").put("pValue", 1.0).put("alpha", 0.0033).put("looks", 812)));
    add.accept(100L, rolledBack);
    add.accept(130L, JSON.createObjectNode().put("_type", "VersionRegistered").put("version", "v9")
        .put("artifact", "file:///ckpt/v9").put("manual", true));
    ObjectNode started9 = JSON.createObjectNode().put("_type", "RolloutStarted").put("version", "v9").put("stableVersion", "v7")
        .put("reason", "auto-deploy");
    started9.putArray("plan").add(0.05).add(0.2).add(0.5).add(1.0);
    add.accept(131L, started9);
    for (int i = 0; i < 40; i++) {
      ObjectNode o = JSON.createObjectNode().put("_type", "OutcomeRecorded").put("sessionId", "t-" + i)
          .put("modelVersion", i % 2 == 0 ? "v9" : "v7").put("success", rnd.nextDouble() < 0.9)
          .put("rating", 4).put("thumbsUp", 1).put("thumbsDown", 0).put("latencyP95Ms", 760 + rnd.nextInt(60));
      add.accept(132L + i, o);
    }
    return audit;
  }

  @Test
  void jobsPoolChartsAndAnAutomaticRollbackAreShownFromTheApiAnswers() throws Exception {
    try (HeadlessChromium browser = HeadlessChromium.launch(1400, 1000)) {
      // Agents: found from the job list; one more added by URL whose models answer 503.
      browser.navigate(base + "/console/?agent=broken-agent#/agents");
      browser.waitFor("document.querySelector('[data-agent=\"" + AGENT + "\"] [data-field=\"pool\"]')", WAIT);
      browser.waitFor("document.querySelector('[data-agent=\"broken-agent\"]')", WAIT);
      String card = browser.eval("document.querySelector('[data-agent=\"" + AGENT + "\"]').innerText").asText();
      assertTrue(card.contains("640 / 1000") && card.contains("64% of min-samples"), card);
      assertEquals("1000", browser.eval("document.querySelector('[data-agent=\"" + AGENT + "\"] [role=progressbar]')"
          + ".getAttribute('aria-valuemax')").asText());
      assertEquals("64%", browser.eval("document.querySelector('[data-agent=\"" + AGENT + "\"] .progress-fill').style.width").asText());
      assertTrue(card.contains("threshold, scheduled") && (card.contains("(in 4h 5") || card.contains("(in 5h 0m")), card);
      assertTrue(card.contains("job-3-travel-planner RUNNING"), card);
      assertTrue(card.contains("v7 STABLE 95%") && card.contains("v9 CANARY at 5%"), card);
      String broken = browser.eval("document.querySelector('[data-agent=\"broken-agent\"]').innerText").asText();
      assertTrue(broken.contains("The node is unavailable (503)") && broken.contains("the journal did not answer within 5s"), broken);
      assertTrue(browser.eval("!document.getElementById('banner').hidden").asBoolean(), "503 also in the banner");
      browser.screenshot("fixture-01-agents");

      // Auto-refresh every 5 s, and pausing it.
      String first = browser.eval("document.querySelector('.page').dataset.rendered").asText();
      browser.waitFor("document.querySelector('.page').dataset.rendered !== '" + first + "'", Duration.ofSeconds(12));
      browser.eval("document.getElementById('refresh-toggle').click(); true");
      assertEquals("Resume", browser.eval("document.getElementById('refresh-toggle').textContent").asText());
      Thread.sleep(500);
      String paused = browser.eval("document.querySelector('.page').dataset.rendered").asText();
      Thread.sleep(6500);
      assertEquals(paused, browser.eval("document.querySelector('.page').dataset.rendered").asText(), "refreshed while paused");
      browser.eval("document.getElementById('refresh-toggle').click(); true");

      // Jobs table.
      browser.navigate(base + "/console/#/jobs");
      browser.waitFor("document.querySelectorAll('tr[data-job]').length === 3", WAIT);
      String failedRow = browser.eval("document.querySelector('tr[data-job=\"job-2-travel-planner\"]').innerText").asText();
      assertTrue(failedRow.contains("FAILED") && failedRow.contains("manual") && failedRow.contains("sft")
          && failedRow.contains("800") && failedRow.contains("CUDA out of memory at global_step 120")
          && failedRow.contains("45m 0s"), failedRow);
      String runningRow = browser.eval("document.querySelector('tr[data-job=\"job-3-travel-planner\"]').innerText").asText();
      assertTrue(runningRow.contains("RUNNING") && runningRow.contains("threshold") && runningRow.contains("grpo")
          && runningRow.contains("1200") && runningRow.contains("5m 0s"), runningRow);
      browser.screenshot("fixture-02-jobs");

      // One job: history and audit events.
      browser.navigate(base + "/console/#/jobs/job-2-travel-planner");
      browser.waitFor("document.querySelectorAll('table.audit tbody tr').length === 4", WAIT);
      String job = browser.text();
      assertTrue(job.contains("Ray job FAILED: CUDA out of memory at global_step 120"), job);
      assertEquals(4, browser.eval("document.querySelectorAll('ol.timeline li').length").asInt());
      assertTrue(job.contains("JobSubmitted") && job.contains("JobStatusChanged"), job);
      assertTrue(job.contains("queued 5m 0s · ran 45m 0s · total 50m 0s"), job);
      browser.screenshot("fixture-03-job");
      assertTrue(job.contains("No logs for this job"), job);
      browser.navigate(base + "/console/#/jobs/job-3-travel-planner");
      browser.waitFor("document.body.innerText.includes('No audit trail available for job job-3-travel-planner')", WAIT);
      // Training visible while it runs: the trainer's step/loss points and its log.
      assertEquals(3, browser.eval("Number(document.querySelector('[data-field=\"loss-points\"]').dataset.count)").asInt());
      assertEquals(1, browser.eval("document.querySelectorAll('[data-field=\"loss-points\"] polyline').length").asInt());
      String logs = browser.eval("document.querySelector('[data-field=\"logs\"]').innerText").asText();
      assertTrue(logs.startsWith("Trinity-RFT running") && logs.contains("step 3: actor/loss=0.4500"), logs);
      assertEquals("Log lines 1–4 of 4", browser.eval("document.querySelector('[data-field=\"log-range\"]').innerText").asText());

      // Models: the automatic rollback with its figures, charts over time with the tolerance band.
      browser.navigate(base + "/console/#/models/" + AGENT);
      browser.waitFor("document.querySelector('.rollout[data-candidate=\"v8\"]')", WAIT);
      assertEquals(ROLLBACK_REASON, browser.eval(
          "document.querySelector('.rollback[data-version=\"v8\"] [data-field=\"rollback-reason\"]').innerText").asText());
      String rollback = browser.eval("document.querySelector('.rollback[data-version=\"v8\"]').innerText").asText();
      assertTrue(rollback.contains("Automatic rollback"), rollback);
      String latencyRow = browser.eval("document.querySelector('.rollback tr[data-metric=\"response-latency\"]').innerText").asText();
      assertTrue(latencyRow.contains("815 ms (n=40)") && latencyRow.contains("1412 ms (n=40)") && latencyRow.contains("10%")
          && latencyRow.contains("897 ms") && latencyRow.contains("DEGRADED"), latencyRow);
      assertEquals(1, browser.eval("document.querySelectorAll('.rollback tr.degraded').length").asInt());
      String tokensRow = browser.eval("document.querySelector('.rollback tr[data-metric=\"tokens-per-session\"]').innerText").asText();
      assertTrue(tokensRow.contains("Tokens per session (guardrail)") && tokensRow.contains("1560 (n=40)")
          && tokensRow.contains("20%") && tokensRow.contains("look 812") && tokensRow.contains("ok"), tokensRow);
      String v8 = ".rollout[data-candidate=\"v8\"] ";
      assertEquals(3, browser.eval("document.querySelectorAll('" + v8 + "figure[data-metric]').length").asInt());
      for (String metric : new String[] {"task-success-rate", "user-satisfaction", "response-latency"}) {
        String fig = v8 + "figure[data-metric=\"" + metric + "\"] ";
        assertEquals(1, browser.eval("document.querySelectorAll('" + fig + "path.series.candidate').length").asInt(), metric);
        assertEquals(1, browser.eval("document.querySelectorAll('" + fig + "path.series.stable').length").asInt(), metric);
        assertEquals(1, browser.eval("document.querySelectorAll('" + fig + "polygon.band').length").asInt(), metric);
        assertTrue(browser.eval("document.querySelector('" + fig + "svg').textContent").asText().contains("20%"), metric);
      }
      assertEquals(1, browser.eval("document.querySelectorAll('" + v8 + "figure[data-metric=\"response-latency\"] .marker.degraded').length").asInt());
      assertTrue(browser.eval("document.querySelector('" + v8 + "figure[data-metric=\"response-latency\"] svg').textContent").asText()
          .contains("tolerance 10% slower"));
      assertEquals(3, browser.eval("document.querySelectorAll('.rollout[data-candidate=\"v9\"] figure[data-metric]').length").asInt());
      String models = browser.text();
      assertTrue(models.contains("Stable: v7") && models.contains("v9 CANARY at 5%"), models);
      browser.screenshot("fixture-04-models");

      assertTrue(browser.pageErrors.isEmpty(), "page errors: " + browser.pageErrors);
    }
  }
}
