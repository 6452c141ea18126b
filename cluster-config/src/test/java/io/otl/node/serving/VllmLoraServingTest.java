package io.otl.node.serving;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.serving.ServingException;
import io.otl.core.serving.ServingTarget;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletionException;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The vllm-lora backend against the simulator's model face over real HTTP, and the simulator's
 * vLLM shapes themselves: model list, load/unload refusals, per-adapter quality.
 */
class VllmLoraServingTest {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  private static ActorTestKit testKit;
  private static TrinitySimulator simulator;
  private static VllmLoraServing backend;
  private static Path checkpoints;

  @BeforeAll
  static void start() throws IOException {
    testKit = ActorTestKit.create("VllmLoraServingTest");
    Files.createDirectories(Path.of("target"));
    Path work = Files.createTempDirectory(Path.of("target"), "vllm-lora-test");
    checkpoints = Files.createDirectories(work.resolve("ckpt"));
    simulator = TrinitySimulator.start(testKit.system(),
        SimulatorSettings.defaults().withPort(0).withWorkDir(work.resolve("sim")), "base-7b");
    backend = new VllmLoraServing(simulator.baseUrl(), "", Duration.ofSeconds(10));
  }

  @AfterAll
  static void stop() {
    simulator.stop();
    testKit.shutdownTestKit();
  }

  private static Path adapterDir(String name) throws IOException {
    return Files.createDirectories(checkpoints.resolve(name));
  }

  private static HttpResponse<String> send(String method, String path, String body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(simulator.baseUrl() + path));
    b = body == null ? b.method(method, HttpRequest.BodyPublishers.noBody())
        : b.header("Content-Type", "application/json").method(method, HttpRequest.BodyPublishers.ofString(body));
    return HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static boolean listed(String model) throws Exception {
    for (JsonNode card : MAPPER.readTree(send("GET", "/v1/models", null).body()).path("data")) {
      if (card.path("id").asText().equals(model)) {
        return true;
      }
    }
    return false;
  }

  @Test
  void loadsListsAndUnloadsAnAdapterIdempotently() throws Exception {
    String artifact = "file://" + adapterDir("a1").toAbsolutePath();
    ServingTarget target = backend.target("agent-a", "v1", artifact, "ignored");
    assertEquals(simulator.baseUrl() + "/v1", target.endpoint());
    assertTrue(target.servedModel().startsWith("agent-a-v1-"), target.servedModel());

    backend.deploy(target, artifact).toCompletableFuture().join();
    assertTrue(listed(target.servedModel()));
    // The answer names the adapter that gave it, not the Trinity proxy's "model version 0" (which read as
    // the base model's answer in a v1 session).
    String reply = MAPPER.readTree(send("POST", "/v1/chat/completions", "{\"model\":\"" + target.servedModel()
        + "\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}").body())
        .path("choices").path(0).path("message").path("content").asText();
    assertEquals("[simulated reply from LoRA adapter " + target.servedModel() + "] Hi", reply);
    JsonNode list = MAPPER.readTree(send("GET", "/v1/models", null).body());
    assertEquals("list", list.path("object").asText());
    assertEquals("base-7b", list.path("data").path(0).path("id").asText(), "the base model comes first");

    // A repeated load (after a crash) succeeds without loading twice.
    backend.deploy(target, artifact).toCompletableFuture().join();
    JsonNode stats = MAPPER.readTree(send("GET", "/simulator/models", null).body());
    assertEquals(1, stats.path("loads").path(target.servedModel()).asInt());

    backend.undeploy(target).toCompletableFuture().join();
    assertFalse(listed(target.servedModel()));
    backend.undeploy(target).toCompletableFuture().join(); // already gone: success
  }

  @Test
  void missingAdapterPathIsAFinalRefusal() {
    ServingTarget target = backend.target("agent-a", "v9", "file:///nowhere/v9", "ignored");
    CompletionException e = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class,
        () -> backend.deploy(target, "file:///nowhere/v9").toCompletableFuture().join());
    ServingException se = assertInstanceOf(ServingException.class, e.getCause());
    assertFalse(se.retryable());
    assertTrue(se.getMessage().contains("HTTP 404"), se.getMessage());
  }

  @Test
  void aServerWithoutRuntimeLoraUpdatingIsNamedWithTheFix() throws Exception {
    // vLLM started without VLLM_ALLOW_RUNTIME_LORA_UPDATING registers no load route: its web
    // framework answers 404 {"detail":"Not Found"}, as this server does for every path.
    com.sun.net.httpserver.HttpServer plain =
        com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", 0), 0);
    plain.createContext("/", exchange -> {
      byte[] body = "{\"detail\":\"Not Found\"}".getBytes(java.nio.charset.StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "application/json");
      exchange.sendResponseHeaders(404, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    plain.start();
    try {
      VllmLoraServing noRuntimeApi = new VllmLoraServing(
          "http://127.0.0.1:" + plain.getAddress().getPort() + "/v1", "", Duration.ofSeconds(5));
      String artifact = "file://" + adapterDir("no-route").toAbsolutePath();
      ServingTarget target = noRuntimeApi.target("agent-a", "v1", artifact, "ignored");
      CompletionException e = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class,
          () -> noRuntimeApi.deploy(target, artifact).toCompletableFuture().join());
      ServingException se = assertInstanceOf(ServingException.class, e.getCause());
      assertFalse(se.retryable(), "a restart of vLLM with the setting is needed, not a retry");
      assertTrue(se.getMessage().contains("VLLM_ALLOW_RUNTIME_LORA_UPDATING=True"), se.getMessage());
      assertTrue(se.getMessage().contains("--enable-lora"), se.getMessage());
    } finally {
      plain.stop(0);
    }
    // vLLM's own 404 (an adapter path it cannot find) is not taken for a missing route.
    assertFalse(VllmLoraServing.isMissingRoute(
        "{\"error\":{\"message\":\"No adapter found for /x\",\"type\":\"NotFoundError\",\"param\":null,\"code\":404}}"));
  }

  @Test
  void serverDownIsRetryable() {
    VllmLoraServing nowhere = new VllmLoraServing("http://127.0.0.1:1", "", Duration.ofSeconds(2));
    ServingTarget target = nowhere.target("a", "v1", "x", "e");
    CompletionException e = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class,
        () -> nowhere.deploy(target, "x").toCompletableFuture().join());
    assertFalse(e.getCause() instanceof ServingException se && !se.retryable(), "a connection failure is retried");
  }

  @Test
  void servedNamesDifferPerVersionAndPerWeights() {
    assertNotEquals(VllmLoraServing.servedName("a", "v1", "file:///x"), VllmLoraServing.servedName("a", "v2", "file:///x"));
    assertNotEquals(VllmLoraServing.servedName("a", "v1", "file:///x"), VllmLoraServing.servedName("a", "v1", "file:///y"));
    assertEquals(VllmLoraServing.servedName("a", "v1", "file:///x"), VllmLoraServing.servedName("a", "v1", "file:///x"));
  }

  /**
   * Trial t85: agents {@code Tw} and {@code tw} registered one adapter directory as v1, both got
   * {@code tw-v1-5422a899}, and Tw's rollback unloaded tw's canary (its calls 404, then fell back
   * to stable). The readable part is cleaned and lower-cased, so the hash must tell them apart.
   */
  @Test
  void servedNamesDifferPerAgentAndVersionEvenWhenTheirCleanedSpellingsAreEqual() {
    String a = "file:///ckpt/shared";
    assertNotEquals(VllmLoraServing.servedName("Tw", "v1", a), VllmLoraServing.servedName("tw", "v1", a));
    assertNotEquals(VllmLoraServing.servedName("a-b", "c", a), VllmLoraServing.servedName("a", "b-c", a));
    assertNotEquals(VllmLoraServing.servedName("a", "v1:x", a), VllmLoraServing.servedName("a", "v1+x", a));
    assertNotEquals(VllmLoraServing.servedName("a", "V1", a), VllmLoraServing.servedName("a", "v1", a));
    assertTrue(VllmLoraServing.servedName("Tw", "v1", a).matches("tw-v1-[0-9a-f]{8}"));
  }

  @Test
  void simulatorAnswersWithVllmErrors() throws Exception {
    String path = adapterDir("dup").toAbsolutePath().toString();
    assertEquals(200, send("POST", "/v1/load_lora_adapter", "{\"lora_name\":\"dup\",\"lora_path\":\"" + path + "\"}").statusCode());
    HttpResponse<String> again = send("POST", "/v1/load_lora_adapter", "{\"lora_name\":\"dup\",\"lora_path\":\"" + path + "\"}");
    assertEquals(400, again.statusCode());
    JsonNode error = MAPPER.readTree(again.body());
    assertEquals("error", error.path("object").asText());
    assertEquals("InvalidUserInput", error.path("type").asText());
    assertEquals("The lora adapter 'dup' has already been loaded.", error.path("message").asText());

    HttpResponse<String> noPath = send("POST", "/v1/load_lora_adapter", "{\"lora_name\":\"x\"}");
    assertEquals(400, noPath.statusCode());
    assertEquals("Both 'lora_name' and 'lora_path' must be provided.", MAPPER.readTree(noPath.body()).path("message").asText());

    HttpResponse<String> unknown = send("POST", "/v1/unload_lora_adapter", "{\"lora_name\":\"never-loaded\"}");
    assertEquals(404, unknown.statusCode());
    assertEquals("NotFoundError", MAPPER.readTree(unknown.body()).path("type").asText());
    assertEquals("The lora adapter 'never-loaded' cannot be found.", MAPPER.readTree(unknown.body()).path("message").asText());
  }

  /**
   * vLLM releases before NotFoundError answer an unload of a name they do not have with 400 "cannot be
   * found": the adapter is not there, so the unload is done. Before, it was retried for ever.
   */
  @Test
  void anOlderVllmsFourHundredForAnUnknownAdapterCountsAsUnloaded() throws Exception {
    com.sun.net.httpserver.HttpServer old = com.sun.net.httpserver.HttpServer.create(
        new java.net.InetSocketAddress("127.0.0.1", 0), 0);
    old.createContext("/v1/unload_lora_adapter", x -> {
      String name = MAPPER.readTree(x.getRequestBody()).path("lora_name").asText();
      boolean known = name.equals("busy");
      byte[] body = (known ? "{\"object\":\"error\",\"message\":\"adapter busy\",\"type\":\"BadRequestError\",\"code\":400}"
          : "{\"object\":\"error\",\"message\":\"The lora adapter '" + name + "' cannot be found.\","
              + "\"type\":\"BadRequestError\",\"code\":400}").getBytes(java.nio.charset.StandardCharsets.UTF_8);
      x.getResponseHeaders().add("Content-Type", "application/json");
      x.sendResponseHeaders(400, body.length);
      x.getResponseBody().write(body);
      x.close();
    });
    old.start();
    try {
      VllmLoraServing b = new VllmLoraServing("http://127.0.0.1:" + old.getAddress().getPort(), "", Duration.ofSeconds(10));
      b.undeploy(new ServingTarget("unused", "never-loaded")).toCompletableFuture().join();
      CompletionException refused = org.junit.jupiter.api.Assertions.assertThrows(CompletionException.class,
          () -> b.undeploy(new ServingTarget("unused", "busy")).toCompletableFuture().join());
      assertInstanceOf(ServingException.class, refused.getCause(), "any other 400 is still a failure");
    } finally {
      old.stop(0);
    }
  }

  @Test
  void aWorseAdapterFailsTheConfiguredShareOfTasks() throws Exception {
    HttpResponse<String> bad = send("POST", "/simulator/models/worse/quality", "{\"failureRate\":2}");
    assertEquals(400, bad.statusCode());
    assertEquals(200, send("POST", "/simulator/models/worse/quality", "{\"failureRate\":0.5}").statusCode());
    int failed = 0;
    for (int i = 0; i < 200; i++) {
      String body = "{\"model\":\"worse\",\"messages\":[{\"role\":\"user\",\"content\":\"task " + i + "\"}]}";
      String content = MAPPER.readTree(send("POST", "/v1/chat/completions", body).body())
          .path("choices").path(0).path("message").path("content").asText();
      if (content.equals("I cannot complete this task.")) {
        failed++;
      }
    }
    assertTrue(failed > 60 && failed < 140, "about half of 200 distinct tasks fail: " + failed);
    String good = "{\"model\":\"base-7b\",\"messages\":[{\"role\":\"user\",\"content\":\"task 1\"}]}";
    assertNotEquals("I cannot complete this task.", MAPPER.readTree(send("POST", "/v1/chat/completions", good).body())
        .path("choices").path(0).path("message").path("content").asText());
  }
  @Test
  void aQualityWithAMisspeltFieldOrATextValueIsRefusedAndChangesNothing() throws Exception {
    assertEquals(200, send("POST", "/simulator/models/strict/quality", "{\"failureRate\":0.4}").statusCode());
    for (String body : new String[] {"{\"failure_rate\":1.0}", "{\"failureRate\":\"1.0\"}",
        "{\"failureRate\":1.0,\"addedLatency\":200}", "{\"addedLatencyMs\":1.5}", "[1]"}) {
      HttpResponse<String> refused = send("POST", "/simulator/models/strict/quality", body);
      assertEquals(400, refused.statusCode(), body + " -> " + refused.body());
      assertEquals("invalid_quality", MAPPER.readTree(refused.body()).path("error").asText(), refused.body());
    }
    HttpResponse<String> notJson = send("POST", "/simulator/models/strict/quality", "failureRate=1");
    assertEquals(400, notJson.statusCode(), notJson.body());
    JsonNode notJsonError = MAPPER.readTree(notJson.body());
    assertEquals("invalid_json", notJsonError.path("error").asText(), notJson.body());
    assertFalse(notJsonError.path("message").asText().contains("\n"), notJson.body());
    JsonNode kept = MAPPER.readTree(send("GET", "/simulator/models/strict/quality", null).body());
    assertEquals(0.4, kept.path("failureRate").asDouble(), kept.toString());
    assertEquals(0, kept.path("addedLatencyMs").asLong(), kept.toString());
  }
}
