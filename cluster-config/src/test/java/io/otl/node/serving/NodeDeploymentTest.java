package io.otl.node.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A node on the embedded default's shape (H2 journal, simulator in the node) with the
 * {@code vllm-lora} backend on the simulator's model face, driven only over HTTP: v0 is the base
 * model and STABLE; the first fine-tune (a local adapter directory) is loaded as an adapter and
 * canaries against v0; routes name the adapter; a rollback unloads it; a restarted node keeps every
 * route. A version registered by hand with a model id is served at its own endpoint instead.
 */
class NodeDeploymentTest {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private static Config settings(Path dir) {
    return ConfigFactory.parseMap(Map.of(
            "agentscope.training.read-side.rescan-interval", "2s",
            "agentscope.training.simulator.enabled", true,
            "agentscope.training.simulator.port", 0,
            "agentscope.training.simulator.work-dir", dir.resolve("sim").toString(),
            "agentscope.training.serving.backend", "vllm-lora",
            "agentscope.training.training-runner.base-model", "base-7b",
            "agentscope.training.model-update.canary-ratio", 0.1))
        .withFallback(TestDatabases.node(TestDatabases.h2(dir), true));
  }

  private static JsonNode version(Http http, String agent, String v) {
    for (JsonNode x : http.get("/v1/models/" + agent).json().get("versions")) {
      if (x.get("version").asText().equals(v)) return x;
    }
    throw new AssertionError("no version " + v);
  }

  private static JsonNode awaitState(Http http, String agent, String v, String state) throws InterruptedException {
    return Await.until(v + " " + state, Duration.ofSeconds(30), () -> version(http, agent, v),
        x -> x.get("state").asText().equals(state));
  }

  private static JsonNode awaitDeployment(Http http, String agent, String v, String status) throws InterruptedException {
    return Await.until(v + " deployment " + status, Duration.ofSeconds(30), () -> version(http, agent, v).path("deployment"),
        d -> d.path("status").asText().equals(status));
  }

  private static boolean simulatorLists(String modelsUrl, String model) throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(
        HttpRequest.newBuilder(URI.create(modelsUrl + "/models")).GET().build(), HttpResponse.BodyHandlers.ofString());
    for (JsonNode card : MAPPER.readTree(r.body()).path("data")) {
      if (card.path("id").asText().equals(model)) return true;
    }
    return false;
  }

  /**
   * An agent that calls its model itself asks the route before its first session: with a base model
   * configured it is served by v0 (as the gateway and the Java ModelRouter serve it), not a 404, and
   * the read writes nothing; the answer is what v0 is registered with later.
   */
  @Test
  void anAgentWithNoVersionYetIsRoutedToV0AndTheReadWritesNothing() throws Exception {
    Files.createDirectories(Path.of("target"));
    Path dir = Files.createTempDirectory(Path.of("target"), "node-route-v0");
    Path adapter = Files.createDirectories(dir.resolve("ckpt/v1/huggingface"));
    try (TrainingNode node = TrainingNode.start(Optional.empty(), settings(dir), java.time.Clock.systemUTC())) {
      Http http = new Http(node.httpPort());
      Http.Response fresh = http.get("/v1/models/fresh-agent/route?sessionId=first-session");
      assertEquals(200, fresh.status(), fresh.body());
      assertEquals("fresh-agent", fresh.json().get("agentId").asText());
      assertEquals("first-session", fresh.json().get("sessionId").asText());
      assertEquals("v0", fresh.json().get("version").asText());
      assertEquals("base-7b", fresh.json().get("servedModel").asText());
      // The versions read answers v0 the same way (design §3.3: STABLE from the start), writing nothing.
      Http.Response models = http.get("/v1/models/fresh-agent");
      assertEquals(200, models.status(), models.body());
      assertEquals("v0", models.json().get("stable").asText());
      assertEquals(1, models.json().get("versions").size());
      JsonNode freshV0 = models.json().get("versions").get(0);
      assertEquals("STABLE", freshV0.get("state").asText());
      assertEquals(1.0, freshV0.get("ratio").asDouble(), 1e-9);
      assertEquals("CONFIRMED", freshV0.path("deployment").path("status").asText());
      assertEquals(fresh.json().get("endpoint").asText(), freshV0.path("deployment").path("endpoint").asText());
      // Transitions answer as that v0-only agent would, not "has no model versions" (trial t56), and
      // write nothing either.
      Http.Response promote = http.post("/v1/models/fresh-agent/versions/v0/promote", null);
      assertEquals(409, promote.status(), promote.body());
      assertEquals("invalid_transition", promote.json().get("error").asText());
      Http.Response rollback = http.post("/v1/models/fresh-agent/versions/v0/rollback", null);
      assertEquals(409, rollback.status(), rollback.body());
      assertTrue(rollback.json().get("message").asText().contains("no previous stable"), rollback.body());
      // Spelt as the entity spells the same refusal once v0 is written ("cannot roll back v0: …"), trial t103.
      assertTrue(rollback.json().get("message").asText().startsWith("cannot roll back v0: "), rollback.body());
      Http.Response other = http.post("/v1/models/fresh-agent/versions/v1/promote", null);
      assertEquals(404, other.status(), other.body());
      assertTrue(other.json().get("message").asText().contains("its only version is v0"), other.body());
      // Registering v0 by hand is the conflict it is once v0 is written, and writes nothing either (trial
      // t169: the 409 came after the request had journaled the base model's v0, design §7.1 "a rejected
      // request changes nothing").
      Http.Response again = http.post("/v1/models/fresh-agent/versions",
          "{\"version\":\"v0\",\"artifact\":\"hf://org/other\",\"endpoint\":\"http://unused.invalid/v1\"}");
      assertEquals(409, again.status(), again.body());
      assertEquals("conflict", again.json().get("error").asText(), again.body());
      assertEquals("version v0 already exists (it is STABLE)", again.json().get("message").asText(), again.body());
      assertEquals(404, http.get("/v1/audit/model/fresh-agent").status(), "the reads and refusals wrote nothing");

      Http.Response reg = http.post("/v1/models/other-agent/versions", "{\"version\":\"v1\",\"artifact\":\"file://"
          + adapter.toAbsolutePath() + "\",\"endpoint\":\"http://unused.invalid/v1\"}");
      assertEquals(201, reg.status(), reg.body());
      JsonNode v0 = version(http, "other-agent", "v0").path("deployment");
      assertEquals(v0.get("endpoint").asText(), fresh.json().get("endpoint").asText(), "what v0 is registered with");
      assertEquals(v0.get("servedModel").asText(), fresh.json().get("servedModel").asText());
      assertEquals(400, http.get("/v1/models/fresh-agent/route").status(), "sessionId is still required");
    }
  }

  /**
   * A version registered by hand with a model id and an endpoint (the trial's "my-org/my-lora" at the
   * embedded model server) used to be handed to vllm-lora, which refused to load it: DEPLOY_FAILED.
   * It is served at the endpoint it names, confirmed at once, and the gateway's calls reach it.
   */
  @Test
  void aHandRegisteredVersionIsServedAtItsOwnEndpointAndAnswersThroughTheGateway() throws Exception {
    Files.createDirectories(Path.of("target"));
    Path dir = Files.createTempDirectory(Path.of("target"), "node-own-endpoint");
    String agent = "own-endpoint-bot";
    Config config = ConfigFactory.parseMap(Map.of("agentscope.training.serving.backend", "auto"))
        .withFallback(settings(dir));
    try (TrainingNode node = TrainingNode.start(Optional.empty(), config, java.time.Clock.systemUTC())) {
      Http http = new Http(node.httpPort());
      String modelServer = http.get("/v1/models/" + agent + "/route?sessionId=probe").json().get("endpoint").asText();
      Http.Response reg = http.post("/v1/models/" + agent + "/versions", "{\"version\":\"v1\","
          + "\"artifact\":\"my-org/my-lora\",\"endpoint\":\"" + modelServer + "\"}");
      assertEquals(201, reg.status(), reg.body());
      assertEquals("CANARY", reg.json().get("state").asText(), reg.body());
      JsonNode v1 = version(http, agent, "v1");
      assertEquals("CANARY", v1.get("state").asText());
      assertEquals("CONFIRMED", v1.path("deployment").path("status").asText());
      assertEquals("static", v1.path("deployment").path("backend").asText());
      assertEquals(modelServer, v1.path("deployment").path("endpoint").asText());
      assertFalse(simulatorLists(modelServer, "my-org/my-lora"), "nothing was loaded");

      String onCandidate = null;
      for (int i = 0; i < 300 && onCandidate == null; i++) {
        JsonNode route = http.get("/v1/models/" + agent + "/route?sessionId=c-" + i).json();
        if (route.get("version").asText().equals("v1")) {
          onCandidate = "c-" + i;
          assertEquals(modelServer, route.get("endpoint").asText());
          assertTrue(route.get("servedModel").isNull(), "the agent's own model name goes upstream: " + route);
        }
      }
      assertTrue(onCandidate != null, "about 10 % of the sessions go to the canary");
      Http.Response answer = http.postWithHeaders("/v1/chat/completions",
          ("{\"model\":\"agent-model\",\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}")
              .getBytes(java.nio.charset.StandardCharsets.UTF_8),
          "Content-Type", "application/json", "X-Agent-Id", agent, "X-Session-Id", onCandidate);
      assertEquals(200, answer.status(), answer.body());
      assertEquals("v1", answer.headers().firstValue("X-Model-Version").orElse(""), answer.headers().toString());
      assertTrue(answer.json().path("choices").path(0).path("message").has("content"), answer.body());

      // A version that names its servedModel: that name goes upstream, whatever the agent sends.
      Http.Response bad = http.post("/v1/models/named-bot/versions", "{\"version\":\"v1\",\"artifact\":\"x\","
          + "\"endpoint\":\"" + modelServer + "\",\"servedModel\":\"two words\"}");
      assertEquals(400, bad.status(), bad.body());
      assertTrue(bad.body().contains("servedModel"), bad.body());
      Http.Response named = http.post("/v1/models/named-bot/versions", "{\"version\":\"v1\","
          + "\"artifact\":\"my-org/my-lora\",\"endpoint\":\"" + modelServer + "\",\"servedModel\":\"my-org/my-lora\"}");
      assertEquals(201, named.status(), named.body());
      assertEquals("my-org/my-lora", version(http, "named-bot", "v1").path("deployment").path("servedModel").asText());
      String namedSession = null;
      for (int i = 0; i < 300 && namedSession == null; i++) {
        JsonNode route = http.get("/v1/models/named-bot/route?sessionId=n-" + i).json();
        if (route.get("version").asText().equals("v1")) {
          namedSession = "n-" + i;
          assertEquals("my-org/my-lora", route.get("servedModel").asText());
        }
      }
      assertTrue(namedSession != null, "about 10 % of the sessions go to the canary");
      Http.Response namedAnswer = http.postWithHeaders("/v1/chat/completions",
          ("{\"model\":\"whatever-the-agent-says\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
              .getBytes(java.nio.charset.StandardCharsets.UTF_8),
          "Content-Type", "application/json", "X-Agent-Id", "named-bot", "X-Session-Id", namedSession);
      assertEquals(200, namedAnswer.status(), namedAnswer.body());
      assertEquals("v1", namedAnswer.headers().firstValue("X-Model-Version").orElse(""));
      String root = modelServer.substring(0, modelServer.length() - "/v1".length());
      JsonNode stats = MAPPER.readTree(HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create(root + "/simulator/models")).GET().build(), HttpResponse.BodyHandlers.ofString()).body());
      assertTrue(stats.path("served").path("agent-model").asLong() >= 1, "the agent's own name passed: " + stats);
      assertTrue(stats.path("served").path("my-org/my-lora").asLong() >= 1, "the model server saw the name: " + stats);
    }
  }

  @Test
  void firstFineTuneIsLoadedAndCanariesAgainstTheBaseModelThenRollbackUnloadsIt() throws Exception {
    Files.createDirectories(Path.of("target"));
    Path dir = Files.createTempDirectory(Path.of("target"), "node-deploy");
    Path adapter = Files.createDirectories(dir.resolve("ckpt/v1/huggingface"));
    String agent = "support-bot";
    Map<String, String> routes = new java.util.HashMap<>();
    String served;
    String modelServer;
    try (TrainingNode node = TrainingNode.start(Optional.empty(), settings(dir), java.time.Clock.systemUTC())) {
      Http http = new Http(node.httpPort());
      Http.Response reg = http.post("/v1/models/" + agent + "/versions", "{\"version\":\"v1\",\"artifact\":\"file://"
          + adapter.toAbsolutePath() + "\",\"endpoint\":\"http://unused.invalid/v1\"}");
      assertEquals(201, reg.status(), reg.body());

      JsonNode models = http.get("/v1/models/" + agent).json();
      JsonNode v0 = version(http, agent, "v0");
      assertEquals("STABLE", v0.get("state").asText());
      assertEquals("base-7b", v0.path("deployment").path("servedModel").asText());
      modelServer = v0.path("deployment").path("endpoint").asText();
      assertTrue(modelServer.endsWith("/v1"), modelServer);
      assertEquals("v0", models.get("stable").asText());

      JsonNode v1 = awaitState(http, agent, "v1", "CANARY");
      assertEquals(0.1, v1.get("ratio").asDouble(), 1e-9);
      served = v1.path("deployment").path("servedModel").asText();
      assertTrue(served.startsWith("support-bot-v1-"), served);
      assertEquals("CONFIRMED", v1.path("deployment").path("status").asText());
      assertTrue(simulatorLists(modelServer, served), "the adapter is loaded in the model server");
      assertFalse(http.get("/v1/models/" + agent).body().contains("api-key"));

      int onCandidate = 0;
      for (int i = 0; i < 300; i++) {
        JsonNode route = http.get("/v1/models/" + agent + "/route?sessionId=s-" + i).json();
        routes.put("s-" + i, route.get("version").asText());
        if (route.get("version").asText().equals("v1")) {
          onCandidate++;
          assertEquals(served, route.get("servedModel").asText());
          assertEquals(modelServer, route.get("endpoint").asText());
        } else {
          assertEquals("base-7b", route.get("servedModel").asText());
        }
      }
      assertTrue(onCandidate > 10 && onCandidate < 60, "about 10 % of 300 sessions on v1: " + onCandidate);
    }

    // A restarted node keeps every session's route. Its model server (the simulator) restarted
    // empty, as a vLLM server loses adapters loaded at runtime: recovery loads v1 again.
    try (TrainingNode node = TrainingNode.start(Optional.empty(), settings(dir), java.time.Clock.systemUTC())) {
      Http http = new Http(node.httpPort());
      for (Map.Entry<String, String> e : routes.entrySet()) {
        assertEquals(e.getValue(), http.get("/v1/models/" + agent + "/route?sessionId=" + e.getKey()).json()
            .get("version").asText());
      }
      String server = http.get("/v1/models/" + agent + "/route?sessionId=s-1").json().get("endpoint").asText();
      assertTrue(!server.equals(modelServer), "the simulator listens on a new port: routes follow the configuration");
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (!simulatorLists(server, served) && System.nanoTime() < deadline) {
        Thread.sleep(100);
      }
      assertTrue(simulatorLists(server, served), "v1 is loaded again after the restart");
      Http.Response rb = http.post("/v1/models/" + agent + "/versions/v1/rollback", "{\"reason\":\"test\"}");
      assertEquals(202, rb.status(), rb.body());
      awaitDeployment(http, agent, "v1", "UNDEPLOYED");
      assertFalse(simulatorLists(server, served), "the rolled-back adapter is unloaded");
      assertEquals("v0", http.get("/v1/models/" + agent + "/route?sessionId=s-1").json().get("version").asText());
    }
  }

  /**
   * A model server that restarts while the node runs loses its runtime-loaded adapters: the
   * gateway's first call routed to the lost adapter falls back to the stable and makes the version's
   * entity load its adapters again, so the candidate serves again without a restart of the node.
   */
  @Test
  void anAdapterTheModelServerLostIsLoadedAgainOnceTheGatewayMeetsIt() throws Exception {
    Files.createDirectories(Path.of("target"));
    Path dir = Files.createTempDirectory(Path.of("target"), "node-lost");
    Path adapter = Files.createDirectories(dir.resolve("ckpt/v1/huggingface"));
    String agent = "lost-bot";
    Config config = ConfigFactory.parseMap(Map.of("agentscope.training.model-update.canary-ratio", 0.5,
            "agentscope.training.model-update.steps", java.util.List.of(1.0)))
        .withFallback(settings(dir));
    try (TrainingNode node = TrainingNode.start(Optional.empty(), config, java.time.Clock.systemUTC())) {
      Http http = new Http(node.httpPort());
      assertEquals(201, http.post("/v1/models/" + agent + "/versions", "{\"version\":\"v1\",\"artifact\":\"file://"
          + adapter.toAbsolutePath() + "\",\"endpoint\":\"http://unused.invalid/v1\"}").status());
      JsonNode v1 = awaitState(http, agent, "v1", "CANARY");
      String served = v1.path("deployment").path("servedModel").asText();
      String server = v1.path("deployment").path("endpoint").asText();
      String session = null;
      for (int i = 0; session == null && i < 100; i++) {
        String candidate = "lost-" + i;
        if (http.get("/v1/models/" + agent + "/route?sessionId=" + candidate).json().get("version").asText().equals("v1")) {
          session = candidate;
        }
      }
      assertTrue(session != null, "some session is routed to v1");

      // What a vLLM restart does to the adapter, behind the node's back.
      assertEquals(200, post(server + "/unload_lora_adapter", "{\"lora_name\":\"" + served + "\"}").statusCode());
      assertFalse(simulatorLists(server, served));

      Http.Response first = new Http(node.httpPort()).chat(agent, session, "hi", false);
      assertEquals(200, first.status(), first.body());
      assertEquals("v0", first.headers().firstValue("X-Model-Version").orElse(""), "the lost adapter's call falls back");
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (!simulatorLists(server, served) && System.nanoTime() < deadline) {
        Thread.sleep(100);
      }
      assertTrue(simulatorLists(server, served), "the entity loaded the adapter again");
      Http.Response after = new Http(node.httpPort()).chat(agent, session, "hi", false);
      assertEquals(200, after.status(), after.body());
      assertEquals("v1", after.headers().firstValue("X-Model-Version").orElse(""), "the candidate serves again");
      assertEquals("CONFIRMED", version(http, agent, "v1").path("deployment").path("status").asText());
    }
  }

  private static HttpResponse<String> post(String url, String body) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(url))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aWorseAdapterIsRolledBackByRealTrafficAndUnloaded() throws Exception {
    Files.createDirectories(Path.of("target"));
    Path dir = Files.createTempDirectory(Path.of("target"), "node-rollback");
    Path adapter = Files.createDirectories(dir.resolve("ckpt/v1/huggingface"));
    String agent = "travel-bot";
    Config config = ConfigFactory.parseMap(Map.of(
            "agentscope.training.model-update.canary-ratio", 0.5,
            "agentscope.training.model-update.steps", java.util.List.of(0.75, 1.0),
            "agentscope.training.model-update.min-samples-per-step", 30,
            "agentscope.training.model-update.evaluation-metrics", java.util.List.of("task-success-rate")))
        .withFallback(settings(dir));
    try (TrainingNode node = TrainingNode.start(Optional.empty(), config, java.time.Clock.systemUTC())) {
      Http http = new Http(node.httpPort());
      assertEquals(201, http.post("/v1/models/" + agent + "/versions", "{\"version\":\"v1\",\"artifact\":\"file://"
          + adapter.toAbsolutePath() + "\",\"endpoint\":\"http://unused.invalid/v1\"}").status());
      JsonNode v1 = awaitState(http, agent, "v1", "CANARY");
      String served = v1.path("deployment").path("servedModel").asText();
      String server = v1.path("deployment").path("endpoint").asText();
      String simulatorRoot = server.substring(0, server.length() - "/v1".length());
      assertEquals(200, post(simulatorRoot + "/simulator/models/" + served + "/quality", "{\"failureRate\":0.7}").statusCode());

      // An agent: route, ask the routed model on the simulator, report the task's result.
      for (int i = 0; i < 400 && version(http, agent, "v1").get("state").asText().equals("CANARY"); i++) {
        String session = "trip-" + i;
        JsonNode route = http.get("/v1/models/" + agent + "/route?sessionId=" + session).json();
        String question = "plan trip " + i;
        JsonNode answer = MAPPER.readTree(post(route.get("endpoint").asText() + "/chat/completions",
            MAPPER.createObjectNode().put("model", route.get("servedModel").asText())
                .set("messages", MAPPER.createArrayNode().add(MAPPER.createObjectNode().put("role", "user")
                    .put("content", question))).toString()).body());
        String content = answer.path("choices").path(0).path("message").path("content").asText();
        boolean success = !content.equals("I cannot complete this task.");
        Http.Response r = http.post("/v1/sessions/" + session + "/events", MAPPER.writeValueAsString(Map.of(
            "agentId", agent, "events", java.util.List.of(
                Map.of("type", "start", "modelVersion", route.get("version").asText()),
                Map.of("type", "message", "role", "user", "content", question),
                Map.of("type", "message", "role", "assistant", "content", content, "latencyMs", 300),
                Map.of("type", "result", "status", success ? "SUCCESS" : "FAILURE")))));
        assertEquals(202, r.status(), r.body());
      }
      JsonNode rolledBack = awaitState(http, agent, "v1", "ROLLED_BACK");
      String reason = rolledBack.get("history").get(rolledBack.get("history").size() - 1).get("reason").asText();
      assertTrue(reason.contains("task-success-rate"), reason);
      awaitDeployment(http, agent, "v1", "UNDEPLOYED");
      assertFalse(simulatorLists(server, served), "the worse adapter is unloaded");
      for (int i = 0; i < 50; i++) {
        assertEquals("v0", http.get("/v1/models/" + agent + "/route?sessionId=new-" + i).json().get("version").asText());
      }
    }
  }
}
