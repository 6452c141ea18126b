package io.otl.node.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.HttpResponseFor;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.typesafe.config.Config;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * The loop of issue #15 closed end to end, on the PostgreSQL journal, with the official OpenAI Java
 * SDK as the agent and the node in its own JVM (so it can be killed -9): sessions through the
 * gateway → threshold job on the (simulated) Trinity → the new version, promoted by the operator,
 * loaded as a LoRA adapter into the simulator's vLLM face → about 5 % of new sessions answered by it, as the model server counts
 * by served model name → the adapter made worse → automatic rollback from the agent's task results
 * → the adapter unloaded → every new session on v0. A kill -9 mid-canary changes no session's route.
 *
 * <p>The agent reports what it sees: per-turn feedback naming the response ({@code msgId}, which
 * also tells it the gateway has recorded the turn) and the task's result.
 */
class GatewayFullLoopTest {
  private static final String AGENT = "loop-agent";
  private static final String FAILED_ANSWER = "I cannot complete this task.";

  @Test
  void sessionsTrainAVersionThatCanariesThroughTheGatewayIsRolledBackWhenWorseAndUnloaded() throws Exception {
    Config db = TestDatabases.postgres();
    String url = db.getString("agentscope.training.db.url");
    Path dir = Files.createTempDirectory("otl-gateway-loop-");
    ActorTestKit kit = ActorTestKit.create("simulator");
    // The simulator lives in the test JVM: the model server keeps its loaded adapters and its counts
    // across the node's kill -9, as a separate vLLM server would.
    TrinitySimulator simulator = TrinitySimulator.start(kit.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(dir.resolve("simulator")).withDurations(Duration.ofMillis(200), Duration.ofMillis(800)));
    Http sim = new Http(simulator.port());
    int clusterPort = NodeProcess.freePort();
    int httpPort = NodeProcess.freePort();
    Map<String, String> env = NodeProcess.clusterEnv("pekko://otl@127.0.0.1:" + clusterPort, url,
        TestDatabases.PG_USER, TestDatabases.PG_PASSWORD);
    env.put("OTL_TRINITY_ENDPOINT", simulator.baseUrl());
    try (NodeProcess node = new NodeProcess("gateway-loop", clusterPort, httpPort, NodeProcess.freePort(), env, dir)
        .withConfig("""
            agentscope.training {
              read-side.rescan-interval = 1s
              serving { backend = vllm-lora, vllm.url = "%s", retry.min-backoff = 100ms }
              training-runner {
                trigger { type = threshold, min-samples = 150 }
                poll-interval = 200ms
                dataset-dir = "%s"
                checkpoint-root-dir = "%s"
              }
              model-update {
                # An operator approves each trained version's canary: the sessions of this test fill
                # the pool again, and a second threshold job's version must wait in READY instead of
                # taking traffic while the test checks that everything is back on v0.
                auto-deploy = false
                canary-ratio = 0.05
                steps = [0.5, 1.0]
                step-duration = 1h
                min-samples-per-step = 20
                evaluation-metrics = [task-success-rate]
              }
            }
            """.formatted(simulator.baseUrl(), dir.resolve("datasets"), dir.resolve("checkpoints")))) {
      node.start();
      Http api = new Http(httpPort);
      await("node ready", () -> api.get("/health/ready"), r -> r.status() == 200, node);
      OpenAIClient client = OpenAIOkHttpClient.builder().apiKey("unused").baseUrl("http://127.0.0.1:" + httpPort + "/v1")
          .putHeader("X-Agent-Id", AGENT).maxRetries(0).build();
      String base = simulator.baseModel();

      // 1. 150 sessions on v0, the base model, each a good task: the threshold job starts.
      for (int i = 0; i < 150; i++) {
        Turn t = turn(client, api, "train-" + i, "book a table for " + i, node);
        assertEquals("v0", t.version, "only the base model serves before any training");
      }
      assertEquals(150L, served(sim, base), "the model server answered every call as the base model");

      // 2. The job trains v1; promoted, it is loaded as an adapter and canaries against v0 at 5 %.
      JsonNode ready = await("a trained version READY", () -> candidate(api),
          v -> v != null && v.path("state").asText().equals("READY"), node);
      String v1 = ready.path("version").asText();
      Http.Response promote = api.post("/v1/models/" + AGENT + "/versions/" + v1 + "/promote", "{}");
      assertEquals(202, promote.status(), promote.body());
      JsonNode candidate = await("v1 in CANARY", () -> version(api, v1),
          v -> v.path("state").asText().equals("CANARY"), node);
      String adapter = candidate.path("deployment").path("servedModel").asText();
      assertTrue(adapter.startsWith(AGENT + "-" + v1 + "-"), adapter);
      assertTrue(loaded(sim).contains(adapter), "the adapter is loaded in the model server");
      // What Trinity-RFT's LoRA run writes as the adapter, not the config folder beside it.
      String root = "";
      for (JsonNode card : sim.get("/v1/models").json().path("data")) {
        if (card.path("id").asText().equals(adapter)) root = card.path("root").asText();
      }
      assertTrue(root.matches(".*/global_step_\\d+/actor/lora_adapter/?"), "loaded from " + root);
      assertEquals(1, api.get("/v1/jobs?agentId=" + AGENT).json().path("jobs").size(), "one threshold job");

      Map<String, String> routes = new LinkedHashMap<>();
      int onCandidate = 0;
      for (int i = 0; i < 300; i++) {
        Turn t = turn(client, api, "canary-" + i, "plan a trip to city " + i, node);
        routes.put("canary-" + i, t.version);
        if (t.version.equals(v1)) {
          onCandidate++;
          assertEquals(adapter, t.model, "the candidate's sessions are answered by its adapter");
        } else {
          assertEquals("v0", t.version);
          assertEquals(base, t.model);
        }
      }
      assertEquals(onCandidate, served(sim, adapter), "the model server answered v1's sessions as the adapter");
      assertTrue(onCandidate >= 4 && onCandidate <= 35, "about 5 % of 300 new sessions on v1: " + onCandidate);

      // 3. kill -9 mid-canary: after the restart every session keeps its route.
      node.kill();
      node.start();
      await("node ready again", () -> api.get("/health/ready"), r -> r.status() == 200, node);
      for (Map.Entry<String, String> e : routes.entrySet()) {
        assertEquals(e.getValue(), api.get("/v1/models/" + AGENT + "/route?sessionId=" + e.getKey()).json()
            .path("version").asText(), "route of " + e.getKey() + " after kill -9");
      }
      assertEquals("CANARY", version(api, v1).path("state").asText());

      // 4. v1 gets worse at the model server; the agent's task results roll it back.
      assertEquals(200, sim.post("/simulator/models/" + adapter + "/quality", "{\"failureRate\":1.0}").status());
      int worse = 0;
      for (int i = 0; i < 2000 && version(api, v1).path("state").asText().equals("CANARY"); i++) {
        Turn t = turn(client, api, "worse-" + i, "find a hotel near " + i, node);
        if (t.version.equals(v1)) {
          worse++;
          assertEquals(FAILED_ANSWER, t.content);
        }
      }
      JsonNode rolledBack = await("v1 rolled back", () -> version(api, v1),
          v -> v.path("state").asText().equals("ROLLED_BACK"), node);
      assertTrue(worse > 0, "some sessions saw the worse adapter");
      String reason = rolledBack.path("history").get(rolledBack.path("history").size() - 1).path("reason").asText();
      assertTrue(reason.contains("task-success-rate"), reason);
      await("the adapter unloaded", () -> version(api, v1).path("deployment").path("status").asText(),
          "UNDEPLOYED"::equals, node);
      assertFalse(loaded(sim).contains(adapter), "the rolled-back adapter is no longer in the model server");

      // 5. Every new session is answered by v0, also the ones v1 would have had.
      long adapterCalls = served(sim, adapter);
      for (int i = 0; i < 100; i++) {
        Turn t = turn(client, api, "after-" + i, "what is the weather in " + i, node);
        assertEquals("v0", t.version);
        assertEquals(base, t.model);
      }
      assertEquals(adapterCalls, served(sim, adapter), "no call reached the unloaded adapter");
      for (JsonNode v : api.get("/v1/models/" + AGENT).json().path("versions")) {
        String name = v.path("version").asText();
        if (!name.equals("v0") && !name.equals(v1)) {
          assertEquals("READY", v.path("state").asText(), "a later job's version waits for approval: " + v);
        }
      }
      JsonNode loadsNow = sim.get("/simulator/models").json().path("loads");
      assertEquals(1, loadsNow.path(adapter).asInt(), "loaded once: the restart found it loaded");
    } finally {
      simulator.stop();
      kit.shutdownTestKit();
    }
  }

  /** What the agent saw of one call. */
  private record Turn(String version, String model, String content) {}

  /**
   * One single-turn session through the SDK; the agent then rates the response by its id (retried
   * until the gateway has recorded the turn: recording is off the response path) and reports the
   * task's result: a success unless the model said it cannot do it.
   */
  private static Turn turn(OpenAIClient client, Http api, String session, String question, NodeProcess node)
      throws InterruptedException {
    HttpResponseFor<ChatCompletion> raw = client.chat().completions().withRawResponse().create(
        ChatCompletionCreateParams.builder().model("default").addUserMessage(question)
            .putAdditionalHeader("X-Session-Id", session).build());
    assertEquals(200, raw.statusCode());
    assertEquals(session, raw.headers().values("X-Session-Id").get(0));
    String version = raw.headers().values("X-Model-Version").get(0);
    ChatCompletion c = raw.parse();
    String content = c.choices().get(0).message().content().orElse("");
    boolean success = !content.equals(FAILED_ANSWER);
    String feedback = "{\"kind\":\"" + (success ? "THUMBS_UP" : "THUMBS_DOWN") + "\",\"msgId\":\"" + c.id() + "\"}";
    await("the turn of " + session + " recorded", () -> api.post("/v1/sessions/" + session + "/feedback", feedback),
        r -> r.status() == 202, node);
    Http.Response r = api.post("/v1/sessions/" + session + "/events", "{\"agentId\":\"" + AGENT
        + "\",\"events\":[{\"type\":\"result\",\"status\":\"" + (success ? "SUCCESS" : "FAILURE") + "\"}]}");
    assertEquals(202, r.status(), r.body());
    return new Turn(version, c.model(), content);
  }

  private static JsonNode candidate(Http api) {
    Http.Response r = api.get("/v1/models/" + AGENT);
    if (r.status() != 200) return null;
    for (JsonNode v : r.json().path("versions")) {
      if (!v.path("version").asText().equals("v0")) return v;
    }
    return null;
  }

  private static JsonNode version(Http api, String v) {
    for (JsonNode x : api.get("/v1/models/" + AGENT).json().path("versions")) {
      if (x.path("version").asText().equals(v)) return x;
    }
    throw new AssertionError("no version " + v);
  }

  private static long served(Http sim, String model) {
    return sim.get("/simulator/models").json().path("served").path(model).asLong();
  }

  private static String loaded(Http sim) {
    return sim.get("/simulator/models").json().path("loaded").toString();
  }

  private static <T> T await(String what, Supplier<T> probe, Predicate<T> done, NodeProcess node)
      throws InterruptedException {
    long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
    T last = null;
    while (System.nanoTime() < deadline) {
      try {
        last = probe.get();
        if (done.test(last)) return last;
      } catch (AssertionError connectionRefused) {
        // the node is still starting
      }
      Thread.sleep(50);
    }
    throw new AssertionError("timed out waiting for " + what + "; last: " + last + "\n" + node.tail(80));
  }
}
