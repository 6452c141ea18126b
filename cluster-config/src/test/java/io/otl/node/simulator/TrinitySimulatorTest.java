package io.otl.node.simulator;

import static io.otl.node.trinity.TestHttp.await;
import static io.otl.node.trinity.TestHttp.delete;
import static io.otl.node.trinity.TestHttp.get;
import static io.otl.node.trinity.TestHttp.json;
import static io.otl.node.trinity.TestHttp.post;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The simulator's own contract: Ray's and Trinity's paths, fields and refusals, and its labels. */
class TrinitySimulatorTest {

  private static ActorTestKit testKit;
  private static TrinitySimulator simulator;
  private static TrinitySimulator slow;
  private static Path workDir;
  private static String base;
  private static String slowBase;

  @BeforeAll
  static void start() throws IOException {
    testKit = ActorTestKit.create("TrinitySimulatorTest");
    workDir = Files.createTempDirectory("simulator-test");
    simulator =
        TrinitySimulator.start(
            testKit.system(),
            SimulatorSettings.defaults()
                .withPort(0)
                .withWorkDir(workDir)
                .withDurations(Duration.ofMillis(100), Duration.ofMillis(200)));
    base = simulator.baseUrl();
    // Jobs that stay PENDING until told otherwise: what a live job answers, without racing a timer.
    slow = TrinitySimulator.start(testKit.system(), SimulatorSettings.defaults().withPort(0).withWorkDir(workDir)
        .withDurations(Duration.ofHours(1), Duration.ofHours(1)));
    slowBase = slow.baseUrl();
  }

  @AfterAll
  static void stop() {
    simulator.stop();
    slow.stop();
    testKit.shutdownTestKit();
  }

  @Test
  void everyResponseIsLabelledAsSimulator() {
    for (HttpResponse<String> r : new HttpResponse[] {get(base + "/health"), get(base + "/api/version"), get(base + "/no/such/path")}) {
      assertEquals("true", r.headers().firstValue("X-Trinity-Simulator").orElse(""), r.uri().toString());
    }
    assertEquals(404, get(base + "/no/such/path").statusCode());
    JsonNode version = json(get(base + "/api/version"));
    assertTrue(version.path("ray_version").asText().matches("\\d+\\.\\d+\\.\\d+"), "Ray's clients parse it: " + version);
    assertTrue(version.path("simulator").asText().contains("not Ray"), version.toString());
  }

  @Test
  void onlyEndedJobsCanBeDeleted() {
    post(slowBase + "/api/jobs/", "{\"entrypoint\":\"trinity run --config /nope.yaml\",\"submission_id\":\"del-me\"}");
    HttpResponse<String> live = delete(slowBase + "/api/jobs/del-me");
    assertEquals(400, live.statusCode(), live.body());
    assertTrue(live.body().contains("non-terminal state"), live.body());
    assertEquals(200, get(slowBase + "/api/jobs/del-me").statusCode(), "a refused delete changes nothing");
    HttpResponse<String> early = post(slowBase + "/simulator/jobs/del-me/finish", null);
    assertEquals(200, early.statusCode(), early.body());
    assertFalse(json(early).path("finished").asBoolean(), "only a RUNNING job can be finished: " + early.body());
    assertEquals("PENDING", json(get(slowBase + "/api/jobs/del-me")).path("status").asText());

    post(slowBase + "/api/jobs/del-me/stop", null);
    HttpResponse<String> ended = delete(slowBase + "/api/jobs/del-me");
    assertEquals(200, ended.statusCode(), ended.body());
    assertTrue(json(ended).path("deleted").asBoolean());
    assertEquals(404, get(slowBase + "/api/jobs/del-me").statusCode());
    assertEquals(404, delete(slowBase + "/api/jobs/del-me").statusCode());
  }

  /** A start that cannot listen leaves no folder it created behind (an empty ./data/simulator: trial t175). */
  @Test
  void aStartThatCannotListenRemovesTheFoldersItCreated() throws IOException {
    Path parent = Files.createTempDirectory("simulator-refused");
    Path dir = parent.resolve("data").resolve("simulator");
    int taken = simulator.port();
    IllegalStateException refused = assertThrows(IllegalStateException.class,
        () -> TrinitySimulator.start(testKit.system(),
            SimulatorSettings.defaults().withPort(taken).withWorkDir(dir)));
    assertTrue(refused.getMessage().contains("cannot bind"), refused.getMessage());
    assertFalse(Files.exists(parent.resolve("data")), "left " + parent.resolve("data"));
    assertTrue(Files.isDirectory(parent), "a folder that was there stays");
  }

  /**
   * Embedded in the node, the simulator dies with it on a kill -9; the restarted node polls the job it
   * had submitted and must find it (design 3.2), as a real Ray cluster would still have it.
   */
  @Test
  void aRestartedSimulatorKnowsItsJobsAndRefusesThemAgain() throws IOException {
    Path dir = Files.createTempDirectory("simulator-restart");
    TrinitySimulator first = TrinitySimulator.start(testKit.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(dir).withDurations(Duration.ofHours(1), Duration.ofHours(1)));
    String firstBase = first.baseUrl();
    post(firstBase + "/api/jobs/", "{\"entrypoint\":\"python nope.py\",\"submission_id\":\"ended\"}");
    assertEquals(200, post(firstBase + "/simulator/jobs/ended/fail", null).statusCode());
    post(firstBase + "/api/jobs/", "{\"entrypoint\":\"python nope.py\",\"submission_id\":\"live\","
        + "\"metadata\":{\"owner\":\"node-1\"}}");
    long submittedAt = json(get(firstBase + "/api/jobs/live")).path("start_time").asLong();
    first.stop();

    TrinitySimulator second = TrinitySimulator.start(testKit.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(dir).withDurations(Duration.ofMillis(100), Duration.ofMillis(200)));
    try {
      String b = second.baseUrl();
      JsonNode ended = json(get(b + "/api/jobs/ended"));
      assertEquals("FAILED", ended.path("status").asText(), ended.toString());
      assertEquals("JOB_ENTRYPOINT_COMMAND_ERROR", ended.path("error_type").asText(), ended.toString());
      JsonNode live = json(get(b + "/api/jobs/live"));
      assertEquals(submittedAt, live.path("start_time").asLong(), "the same submission: " + live);
      assertEquals("node-1", live.path("metadata").path("owner").asText(), live.toString());
      // Resumed: it runs to its end on the new simulator (its entrypoint is no Trinity run, so FAILED).
      long end = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (List.of("PENDING", "RUNNING").contains(json(get(b + "/api/jobs/live")).path("status").asText())) {
        assertTrue(System.nanoTime() < end, "the resumed job ends");
        try {
          Thread.sleep(50);
        } catch (InterruptedException e) {
          throw new AssertionError(e);
        }
      }
      HttpResponse<String> again = post(b + "/api/jobs/", "{\"entrypoint\":\"python nope.py\",\"submission_id\":\"live\"}");
      // Ray 2.58's head answers 500: its forward to the job agent failed with the agent's 400.
      assertEquals(500, again.statusCode(), "never submitted twice: " + again.body());
      assertTrue(again.body().contains("RuntimeError: Request failed with status code 400: "), again.body());
      assertTrue(again.body().contains("ValueError: Job with submission_id live already exists."), again.body());
    } finally {
      second.stop();
    }
  }

  @Test
  void jobDetailsCarryRaysFields() {
    post(slowBase + "/api/jobs/", "{\"entrypoint\":\"python nope.py\",\"submission_id\":\"details\","
        + "\"runtime_env\":{\"env_vars\":{\"A\":\"1\"}},\"entrypoint_num_cpus\":2}");
    JsonNode pending = json(get(slowBase + "/api/jobs/details"));
    assertEquals("SUBMISSION", pending.path("type").asText());
    assertTrue(pending.path("start_time").asLong() > 0, "Ray stamps start_time at submission: " + pending);
    assertTrue(pending.path("end_time").isNull());
    assertEquals(2.0, pending.path("entrypoint_num_cpus").asDouble());
    assertEquals(0, pending.path("entrypoint_memory").asLong());
    assertTrue(pending.path("entrypoint_num_gpus").isNumber(), pending.toString());
    assertEquals("1", pending.path("runtime_env").path("env_vars").path("A").asText());
    assertTrue(pending.path("message").asText().contains("waiting for resources"), pending.toString());

    assertEquals(200, post(slowBase + "/simulator/jobs/details/fail", null).statusCode());
    JsonNode failed = json(get(slowBase + "/api/jobs/details"));
    assertEquals("FAILED", failed.path("status").asText());
    assertEquals("JOB_ENTRYPOINT_COMMAND_ERROR", failed.path("error_type").asText(), failed.toString());
    assertTrue(failed.path("end_time").asLong() >= failed.path("start_time").asLong());
    assertEquals(400, post(base + "/api/jobs/", "{\"entrypoint\":\"x\",\"entrypoint_memory\":1.5}").statusCode());
    assertEquals(400, post(base + "/api/jobs/", "{\"entrypoint\":\"x\",\"runtime_env\":[]}").statusCode());
  }

  /**
   * Ray's {@code GET /api/jobs/<id>/logs/tail}: a WebSocket of text frames, the log so far first, then
   * each new piece, closed normally once the job has ended (RayPythonClientTest drives it with Ray's
   * own {@code tail_job_logs}).
   */
  @Test
  void theLogTailIsAWebSocketThatStreamsNewLinesAndClosesWhenTheJobEnds() throws Exception {
    post(slowBase + "/api/jobs/", "{\"entrypoint\":\"python nope.py\",\"submission_id\":\"tailed\"}");
    java.util.concurrent.LinkedBlockingQueue<String> frames = new java.util.concurrent.LinkedBlockingQueue<>();
    java.util.concurrent.CompletableFuture<Integer> closed = new java.util.concurrent.CompletableFuture<>();
    java.net.http.WebSocket ws = java.net.http.HttpClient.newHttpClient().newWebSocketBuilder()
        .buildAsync(java.net.URI.create(slowBase.replace("http://", "ws://") + "/api/jobs/tailed/logs/tail"),
            new java.net.http.WebSocket.Listener() {
              private final StringBuilder partial = new StringBuilder();

              @Override
              public java.util.concurrent.CompletionStage<?> onText(java.net.http.WebSocket w, CharSequence data,
                  boolean last) {
                partial.append(data);
                if (last) {
                  frames.add(partial.toString());
                  partial.setLength(0);
                }
                w.request(1);
                return null;
              }

              @Override
              public java.util.concurrent.CompletionStage<?> onClose(java.net.http.WebSocket w, int status,
                  String reason) {
                closed.complete(status);
                return null;
              }
            }).get(10, java.util.concurrent.TimeUnit.SECONDS);
    String first = frames.poll(10, java.util.concurrent.TimeUnit.SECONDS);
    assertTrue(first != null && !first.isEmpty(), "the log so far comes first");
    assertFalse(closed.isDone(), "a live job's tail stays open");
    assertEquals(200, post(slowBase + "/simulator/jobs/tailed/fail", null).statusCode());
    assertEquals(1000, closed.get(10, java.util.concurrent.TimeUnit.SECONDS), "a normal close once the job ended");
    StringBuilder all = new StringBuilder(first);
    frames.forEach(all::append);
    assertEquals(json(get(slowBase + "/api/jobs/tailed/logs")).path("logs").asText(), all.toString(),
        "the frames are the whole log, each piece once");
    assertTrue(all.toString().contains("Job FAILED"), all.toString());
    ws.abort();
  }

  @Test
  void proxyAllocatesSessionIds() {
    String first = json(post(base + "/allocate", null)).path("session_id").asText();
    String second = json(get(base + "/allocate")).path("session_id").asText();
    assertFalse(first.isBlank());
    assertNotEquals(first, second);
  }

  @Test
  void submissionWithoutEntrypointIsBadRequest() {
    HttpResponse<String> r = post(base + "/api/jobs/", "{\"submission_id\":\"no-entry\"}");
    assertEquals(400, r.statusCode());
    assertTrue(r.body().contains("entrypoint"), r.body());
    assertEquals(404, get(base + "/api/jobs/no-entry").statusCode(), "a refused submission creates nothing");
  }

  @Test
  void malformedSubmissionsAreBadRequests() {
    assertEquals(400, post(base + "/api/jobs/", "{not json").statusCode());
    assertEquals(400, post(base + "/api/jobs/", "{\"entrypoint\":\"x\",\"metadata\":{\"n\":1}}").statusCode());
    assertEquals(400, post(base + "/api/jobs/", "{\"entrypoint\":\"x\",\"bogus\":true}").statusCode());
  }

  @Test
  void unknownJobIsNotFoundEverywhere() {
    assertEquals("Job ghost does not exist", get(base + "/api/jobs/ghost").body());
    assertEquals(404, get(base + "/api/jobs/ghost").statusCode());
    assertEquals(404, post(base + "/api/jobs/ghost/stop", null).statusCode());
    assertEquals(404, get(base + "/api/jobs/ghost/logs").statusCode());
    assertEquals(404, get(base + "/api/jobs/ghost/logs/tail").statusCode(), "refused before any upgrade, as Ray does");
    assertEquals(404, post(base + "/simulator/jobs/ghost/fail", null).statusCode());
    assertEquals(404, post(base + "/simulator/jobs/ghost/finish", null).statusCode());
  }

  @Test
  void jobWhoseEntrypointIsNotTrinityRunFails() {
    HttpResponse<String> r = post(base + "/api/jobs/", "{\"entrypoint\":\"python train.py\",\"submission_id\":\"not-trinity\"}");
    assertEquals(200, r.statusCode());
    assertEquals("not-trinity", json(r).path("submission_id").asText());

    JsonNode job = await(() -> json(get(base + "/api/jobs/not-trinity")), j -> j.path("status").asText().equals("FAILED"), Duration.ofSeconds(10));
    assertTrue(job.path("message").asText().contains("trinity run --config"), job.toString());
  }

  @Test
  void jobReadsRenderedYamlAndWritesCheckpointWithMetricOverrides() throws IOException {
    Path config = workDir.resolve("cfg.yaml");
    Files.writeString(
        config,
        "project: agent-x\nname: run-1\ncheckpoint_root_dir: ckpt\nmodel:\n  model_path: base-model\nbuffer:\n  total_epochs: 1\n");
    String body =
        "{\"entrypoint\":\"trinity run --config '" + config + "'\",\"submission_id\":\"yaml-job\","
            + "\"metadata\":{\"metric.user-satisfaction\":\"0.4\"},\"entrypoint_num_gpus\":1}";
    assertEquals(200, post(base + "/api/jobs/", body).statusCode());
    // Live right after submission (100 ms pending: on a loaded machine it may already run).
    assertTrue(java.util.Set.of("PENDING", "RUNNING").contains(json(get(base + "/api/jobs/yaml-job")).path("status").asText()));

    JsonNode done = await(() -> json(get(base + "/api/jobs/yaml-job")), j -> j.path("status").asText().equals("SUCCEEDED"), Duration.ofSeconds(10));

    Path step = workDir.resolve("ckpt/agent-x/run-1/global_step_10");
    assertTrue(Files.isRegularFile(step.resolve("actor/huggingface/config.json")));
    assertTrue(Files.isRegularFile(step.resolve("actor/huggingface/model.safetensors")));
    JsonNode metrics = io.otl.node.trinity.TestHttp.MAPPER.readTree(step.resolve("eval_metrics.json").toFile());
    assertEquals(0.4, metrics.path("user-satisfaction").asDouble());
    assertEquals(0.82, metrics.path("task-success-rate").asDouble());
    assertEquals("Job finished successfully.", done.path("message").asText());
    assertEquals(0, done.path("driver_exit_code").asInt());
    assertTrue(json(get(base + "/api/jobs/")).isArray());
    assertTrue(json(get(base + "/api/jobs/yaml-job/logs")).path("logs").asText().contains("global_step_10"));
  }

  @Test
  void stoppingAnEndedJobAnswersStoppedFalse() {
    post(base + "/api/jobs/", "{\"entrypoint\":\"trinity run --config /nope.yaml\",\"submission_id\":\"stop-twice\"}");
    assertEquals(true, json(post(base + "/api/jobs/stop-twice/stop", null)).path("stopped").asBoolean());
    assertEquals(false, json(post(base + "/api/jobs/stop-twice/stop", null)).path("stopped").asBoolean());
    assertEquals("STOPPED", json(get(base + "/api/jobs/stop-twice")).path("status").asText());
  }

  @Test
  void chatCompletionReadsContentParts() {
    // OpenAI's content parts, as many clients send even plain text: the model face echoed nothing and
    // never called a tool for them (it read only string contents).
    String parts = "[{\"type\":\"text\",\"text\":\"weather in Paris,\"},"
        + "{\"type\":\"image_url\",\"image_url\":{\"url\":\"data:image/png;base64,AA==\"}},"
        + "{\"type\":\"text\",\"text\":\"use get_weather\"}]";
    HttpResponse<String> echo = post(base + "/v1/chat/completions",
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":" + parts + "}]}");
    assertEquals(200, echo.statusCode(), echo.body());
    assertTrue(json(echo).path("choices").get(0).path("message").path("content").asText()
        .endsWith("] weather in Paris,\nuse get_weather"), echo.body());
    HttpResponse<String> call = post(base + "/v1/chat/completions",
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":" + parts + "}],"
            + "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":"
            + "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}}]}");
    JsonNode toolCall = json(call).path("choices").get(0).path("message").path("tool_calls").path(0);
    assertEquals("get_weather", toolCall.path("function").path("name").asText(), call.body());
    assertEquals("{\"city\":\"weather in Paris,\\nuse get_weather\"}", toolCall.path("function").path("arguments").asText());
  }

  /**
   * With {@code n=2} both choices call the tool; an agent answers a call by its id, so each call has
   * an id of its own (the two choices used to share one), whole and streamed, and a later response's
   * calls have others again.
   */
  @Test
  void everyToolCallHasAnIdOfItsOwn() throws IOException {
    String request = "{\"model\":\"m\",\"n\":2,\"messages\":[{\"role\":\"user\",\"content\":\"use get_weather\"}],"
        + "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"parameters\":"
        + "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}}]";
    HttpResponse<String> whole = post(base + "/v1/chat/completions", request + "}");
    assertEquals(200, whole.statusCode(), whole.body());
    List<String> ids = new java.util.ArrayList<>();
    for (JsonNode choice : json(whole).path("choices")) {
      JsonNode call = choice.path("message").path("tool_calls").path(0);
      assertEquals("get_weather", call.path("function").path("name").asText(), whole.body());
      ids.add(call.path("id").asText());
    }
    HttpResponse<String> streamed = post(base + "/v1/chat/completions", request + ",\"stream\":true}");
    assertEquals(200, streamed.statusCode(), streamed.body());
    int streamedCalls = 0;
    for (String line : streamed.body().split("\n")) {
      if (!line.startsWith("data: {")) continue;
      for (JsonNode call : new com.fasterxml.jackson.databind.ObjectMapper().readTree(line.substring(6))
          .path("choices").path(0).path("delta").path("tool_calls")) {
        ids.add(call.path("id").asText());
        streamedCalls++;
      }
    }
    assertEquals(2, streamedCalls, streamed.body());
    assertEquals(4, ids.size(), ids.toString());
    assertEquals(4, new java.util.HashSet<>(ids).size(), "ids: " + ids);
    assertTrue(ids.stream().allMatch(id -> id.startsWith("call_")), ids.toString());
  }

  @Test
  void chatCompletionNeedsMessages() {
    HttpResponse<String> r = post(base + "/v1/chat/completions", "{\"model\":\"m\"}");
    assertEquals(400, r.statusCode());
    assertEquals("error", json(r).path("object").asText());
  }

  /**
   * vLLM (and OpenAI) refuse {@code top_logprobs} without {@code logprobs: true} with a 400; the model face
   * answered 200 without any logprobs, so a client tested against it met the refusal only on a real server.
   */
  @Test
  void topLogprobsWithoutLogprobsIsVllmsRefusal() {
    String messages = "\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";
    for (String flag : new String[] {"", ",\"logprobs\":false"}) {
      HttpResponse<String> r = post(base + "/v1/chat/completions", "{" + messages + flag + ",\"top_logprobs\":2}");
      assertEquals(400, r.statusCode(), r.body());
      assertEquals("error", json(r).path("object").asText(), r.body());
      assertEquals("BadRequestError", json(r).path("type").asText(), r.body());
      assertEquals("when using `top_logprobs`, `logprobs` must be set to true.", json(r).path("message").asText(),
          r.body());
    }
    HttpResponse<String> negative = post(base + "/v1/chat/completions",
        "{" + messages + ",\"logprobs\":true,\"top_logprobs\":-2}");
    assertEquals(400, negative.statusCode(), negative.body());
    assertEquals("`top_logprobs` must be a positive value or -1.", json(negative).path("message").asText());
    // read exactly, not wrapped or cut to 0 (review t150)
    for (String top : new String[] {"18446744073709551616", "0.5", "1e400", "-1e400"}) {
      HttpResponse<String> big = post(base + "/v1/chat/completions", "{" + messages + ",\"top_logprobs\":" + top + "}");
      assertEquals(400, big.statusCode(), top + ": " + big.body());
    }
    assertEquals(400, post(base + "/v1/chat/completions",
        "{" + messages + ",\"logprobs\":true,\"top_logprobs\":-18446744073709551617}").statusCode());
    // vLLM lets 0 through without the flag, and answers a request with both.
    assertEquals(200, post(base + "/v1/chat/completions", "{" + messages + ",\"top_logprobs\":0}").statusCode());
    HttpResponse<String> both = post(base + "/v1/chat/completions",
        "{" + messages + ",\"logprobs\":true,\"top_logprobs\":2}");
    assertEquals(200, both.statusCode(), both.body());
    assertEquals(2, json(both).path("choices").get(0).path("logprobs").path("content").get(0)
        .path("top_logprobs").size(), both.body());
  }

  /** vLLM refuses a tool choice without tools (its request model's check); so does the model face. */
  @Test
  void aToolChoiceWithoutToolsIsVllmsRefusal() {
    HttpResponse<String> r = post(base + "/v1/chat/completions",
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tool_choice\":\"required\"}");
    assertEquals(400, r.statusCode(), r.body());
    assertEquals("When using `tool_choice`, `tools` must be set.", json(r).path("message").asText(), r.body());
    HttpResponse<String> none = post(base + "/v1/chat/completions",
        "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"tool_choice\":\"none\"}");
    assertEquals(200, none.statusCode(), none.body());
  }

  /**
   * {@code POST /simulator/jobs/<id>/quality} takes the three evaluation metrics only: a misspelt one
   * ({@code task-succes-rate}) was a 200 that left the checkpoint at its default quality, so the
   * candidate a trial meant to make worse than the stable passed its offline gate (trial trial-loop);
   * a quality for an ended job, whose checkpoint is written, was a 200 that changed nothing.
   */
  @Test
  void aJobQualityWithAnUnknownMetricAValueOutOfRangeOrForAnUnknownOrEndedJobIsRefusedAndChangesNothing() {
    post(slowBase + "/api/jobs/", "{\"entrypoint\":\"trinity run --config /nope.yaml\",\"submission_id\":\"q-live\"}");
    HttpResponse<String> set = post(slowBase + "/simulator/jobs/q-live/quality", "{\"task-success-rate\":0.4}");
    assertEquals(200, set.statusCode(), set.body());
    for (String body : new String[] {"{\"task-succes-rate\":0.1}", "{\"task-success-rate\":\"0.1\"}",
        "{\"task-success-rate\":1.5}", "{\"user-satisfaction\":-0.1}", "{\"response-latency\":-5}",
        "{\"task-success-rate\":0.1,\"accuracy\":0.1}", "[1]"}) {
      HttpResponse<String> refused = post(slowBase + "/simulator/jobs/q-live/quality", body);
      assertEquals(400, refused.statusCode(), body + " -> " + refused.body());
      assertEquals("invalid_quality", json(refused).path("error").asText(), refused.body());
    }
    HttpResponse<String> misspelt = post(slowBase + "/simulator/jobs/q-live/quality", "{\"task-succes-rate\":0.1}");
    assertTrue(json(misspelt).path("message").asText().contains("task-succes-rate"), misspelt.body());
    HttpResponse<String> inForce = get(slowBase + "/simulator/jobs/q-live/quality");
    assertEquals(200, inForce.statusCode(), inForce.body());
    assertEquals(0.4, json(inForce).path("task-success-rate").asDouble(), inForce.body());
    assertEquals(1, json(inForce).size(), "nothing a refusal sent was stored: " + inForce.body());

    HttpResponse<String> ghost = post(slowBase + "/simulator/jobs/q-ghost/quality", "{\"task-success-rate\":0.1}");
    assertEquals(404, ghost.statusCode(), ghost.body());
    assertEquals(404, get(slowBase + "/simulator/jobs/q-ghost/quality").statusCode());

    post(base + "/api/jobs/", "{\"entrypoint\":\"trinity run --config /nope.yaml\",\"submission_id\":\"q-ended\"}");
    await(() -> json(get(base + "/api/jobs/q-ended")), j -> !j.path("status").asText().matches("PENDING|RUNNING"),
        Duration.ofSeconds(10));
    HttpResponse<String> late = post(base + "/simulator/jobs/q-ended/quality", "{\"task-success-rate\":0.1}");
    assertEquals(409, late.statusCode(), late.body());
    assertTrue(json(late).path("message").asText().contains("has ended"), late.body());
  }

  @Test
  void commandLineOptionsBecomeSettings() {
    SimulatorSettings s =
        SimulatorCommand.parse(new String[] {"--port", "8265", "--work-dir", "./data/simulator", "--pending", "1s", "--running", "500ms"});
    assertEquals(8265, s.port());
    assertEquals(Path.of("./data/simulator"), s.workDir());
    assertEquals(Duration.ofSeconds(1), s.pendingDuration());
    assertEquals(Duration.ofMillis(500), s.runningDuration());
    assertNull(SimulatorCommand.parse(new String[] {"--help"}));
    assertThrows(IllegalArgumentException.class, () -> SimulatorCommand.parse(new String[] {"--pending", "soon"}));
    assertThrows(IllegalArgumentException.class, () -> SimulatorCommand.parse(new String[] {"--colour", "red"}));
  }
}
