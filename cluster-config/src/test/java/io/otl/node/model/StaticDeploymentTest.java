package io.otl.node.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Design §3.3: "READY → DEPLOYING → CANARY … Nothing routes to a version whose deployment is
 * unconfirmed." Under the {@code static} backend a version went READY → CANARY with no deployment
 * ({@code deployment: null}), while the same hand version under {@code vllm-lora} showed DEPLOYING
 * and its CONFIRMED static deployment. Both now record the intent and its confirmation in one write
 * (nothing is called), and the model name sent upstream is what it was.
 */
class StaticDeploymentTest {
  private static final String AGENT = "static-agent";
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void aCandidateIsDeployedThenCanariesAndKeepsTheAgentsModelName() throws Exception {
    try (Provider base = new Provider(); Provider own = new Provider()) {
      Path dir = TestDatabases.outputDir("static-deployment");
      Config config = TestDatabases.node(TestDatabases.h2(dir), true);
      Path toml = Files.writeString(dir.resolve("config.toml"), String.join("\n", "[model]",
          "provider = \"openai-compatible\"", "base_url = \"" + base.url() + "\"", "model_name = \"base-7b\"", ""));
      String session;
      try (TrainingNode node = TrainingNode.start(Optional.of(toml), config)) {
        Http http = new Http(node.httpPort());
        JsonNode registered = register(http, "v1", own.url(), null);
        assertEquals("CANARY", registered.get("state").asText(), registered.toString());

        JsonNode models = http.get("/v1/models/" + AGENT).json();
        JsonNode v0 = version(models, "v0");
        assertEquals("CONFIRMED", v0.get("deployment").get("status").asText(), v0.toString());
        assertEquals("static", v0.get("deployment").get("backend").asText(), v0.toString());
        JsonNode v1 = version(models, "v1");
        assertEquals(List.of("REGISTERED", "EVALUATING", "READY", "DEPLOYING", "CANARY"), states(v1), v1.toString());
        JsonNode dep = v1.get("deployment");
        assertTrue(dep != null && !dep.isNull(), v1.toString());
        assertEquals("CONFIRMED", dep.get("status").asText(), v1.toString());
        assertEquals("static", dep.get("backend").asText(), v1.toString());
        assertEquals(own.url(), dep.get("endpoint").asText(), v1.toString());
        assertTrue(dep.get("servedModel") == null || dep.get("servedModel").isNull(), v1.toString());

        // "" = the agent's own model name passes through to the candidate; v0 goes as its own name.
        session = sessionOn(http, "v1");
        // The route names no served model as the deployment does, null (it answered "", a model name no
        // server has), and keeps the field, as docs/api.md lists it.
        JsonNode route = http.get("/v1/models/" + AGENT + "/route?sessionId=" + session).json();
        assertTrue(route.has("servedModel") && route.get("servedModel").isNull(), route.toString());
        assertEquals(200, http.chat(AGENT, session, "Hi", false).status());
        assertEquals(List.of("default"), own.models());
        String onStable = sessionOn(http, "v0");
        assertEquals(200, http.chat(AGENT, onStable, "Hi", false).status());
        assertEquals(List.of("base-7b"), base.models());

        // A rollback calls nothing and records no unload, as for a hand version under vllm-lora.
        Http.Response back = http.post("/v1/models/" + AGENT + "/versions/v1/rollback", "{\"reason\":\"test\"}");
        assertEquals(202, back.status(), back.body());
        JsonNode rolledBack = version(http.get("/v1/models/" + AGENT).json(), "v1");
        assertEquals("ROLLED_BACK", rolledBack.get("state").asText(), rolledBack.toString());
        assertEquals("CONFIRMED", rolledBack.get("deployment").get("status").asText(), rolledBack.toString());
      }
      try (TrainingNode node = TrainingNode.start(Optional.of(toml), config)) {
        JsonNode v1 = version(new Http(node.httpPort()).get("/v1/models/" + AGENT).json(), "v1");
        assertEquals(List.of("REGISTERED", "EVALUATING", "READY", "DEPLOYING", "CANARY", "ROLLED_BACK"),
            states(v1), v1.toString());
        assertEquals("CONFIRMED", v1.get("deployment").get("status").asText(), v1.toString());
      }
    }
  }

  /** Without a base model the first version is stable at once, as before; the second deploys, then canaries. */
  @Test
  void aConfiguredServedModelIsRecordedAndSentAndTheFirstVersionIsPromotedDirectly() throws Exception {
    try (Provider first = new Provider(); Provider second = new Provider()) {
      Config config = ConfigFactory.parseMap(Map.of(
              "agentscope.training.serving.backend", "static",
              "agentscope.training.serving.static.served-model", "served-by-config"))
          .withFallback(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("static-served")), true));
      try (TrainingNode node = TrainingNode.start(config)) {
        Http http = new Http(node.httpPort());
        JsonNode v1 = register(http, "v1", first.url(), null);
        assertEquals("STABLE", v1.get("state").asText(), v1.toString());
        JsonNode v2 = register(http, "v2", second.url(), null);
        assertEquals("CANARY", v2.get("state").asText(), v2.toString());
        JsonNode v3 = register(http, "v3", second.url(), "named-v3");
        assertEquals("READY", v3.get("state").asText(), v3.toString());

        JsonNode models = http.get("/v1/models/" + AGENT).json();
        assertEquals(List.of("REGISTERED", "EVALUATING", "READY", "STABLE"), states(version(models, "v1")));
        JsonNode candidate = version(models, "v2");
        assertEquals(List.of("REGISTERED", "EVALUATING", "READY", "DEPLOYING", "CANARY"), states(candidate),
            candidate.toString());
        assertEquals("CONFIRMED", candidate.get("deployment").get("status").asText(), candidate.toString());
        assertEquals("served-by-config", candidate.get("deployment").get("servedModel").asText(), candidate.toString());

        assertEquals(200, http.chat(AGENT, sessionOn(http, "v2"), "Hi", false).status());
        assertEquals(200, http.chat(AGENT, sessionOn(http, "v1"), "Hi", false).status());
        assertEquals(List.of("served-by-config"), second.models());
        assertEquals(List.of("served-by-config"), first.models());

        // The registration's own name goes with v3 once it rolls out (after v2 is rolled back).
        assertEquals(202, http.post("/v1/models/" + AGENT + "/versions/v2/rollback", "{}").status());
        JsonNode next = version(http.get("/v1/models/" + AGENT).json(), "v3");
        assertEquals("CANARY", next.get("state").asText(), next.toString());
        assertEquals("named-v3", next.get("deployment").get("servedModel").asText(), next.toString());
        assertEquals(200, http.chat(AGENT, sessionOn(http, "v3"), "Hi", false).status());
        assertEquals(List.of("served-by-config", "named-v3"), second.models());
      }
    }
  }

  private static JsonNode register(Http http, String v, String endpoint, String servedModel) {
    String served = servedModel == null ? "" : ",\"servedModel\":\"" + servedModel + "\"";
    Http.Response r = http.post("/v1/models/" + AGENT + "/versions",
        "{\"version\":\"" + v + "\",\"artifact\":\"hf:org/" + v + "\",\"endpoint\":\"" + endpoint + "\"" + served + "}");
    assertEquals(201, r.status(), r.body());
    return r.json();
  }

  private static String sessionOn(Http http, String version) {
    for (int i = 0; i < 5000; i++) {
      String id = "s-" + version + "-" + i;
      if (http.get("/v1/models/" + AGENT + "/route?sessionId=" + id).json().path("version").asText().equals(version)) {
        return id;
      }
    }
    throw new AssertionError("no session routed to " + version);
  }

  private static List<String> states(JsonNode version) {
    List<String> states = new ArrayList<>();
    version.get("history").forEach(h -> states.add(h.get("state").asText()));
    return states;
  }

  private static JsonNode version(JsonNode models, String v) {
    for (JsonNode x : models.get("versions")) {
      if (x.get("version").asText().equals(v)) return x;
    }
    throw new AssertionError("no version " + v + " in " + models);
  }

  /** An OpenAI-compatible server that records the model name of each chat completion it answers. */
  private static final class Provider implements AutoCloseable {
    private final HttpServer server;
    private final List<String> models = Collections.synchronizedList(new ArrayList<>());

    Provider() throws IOException {
      server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
      server.createContext("/v1/chat/completions", exchange -> {
        JsonNode request = JSON.readTree(exchange.getRequestBody().readAllBytes());
        models.add(request.path("model").asText());
        Map<String, Object> message = new HashMap<>(Map.of("role", "assistant", "content", "hello"));
        byte[] body = JSON.writeValueAsBytes(Map.of("id", "chatcmpl-1", "object", "chat.completion", "created", 1,
            "model", request.path("model").asText(), "choices",
            List.of(Map.of("index", 0, "message", message, "finish_reason", "stop"))));
        exchange.getResponseHeaders().add("Content-Type", "application/json");
        exchange.sendResponseHeaders(200, body.length);
        exchange.getResponseBody().write(body);
        exchange.close();
      });
      server.start();
    }

    String url() {
      return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
    }

    List<String> models() {
      synchronized (models) {
        return List.copyOf(models);
      }
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }
}
