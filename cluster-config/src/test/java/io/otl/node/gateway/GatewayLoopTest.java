package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.http.HttpResponseFor;
import com.openai.errors.InternalServerException;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A gateway that calls a gateway (trial t121): a version registered with the node's own {@code /v1} as its
 * endpoint had every call re-enter the gateway, which answered 400 {@code missing_agent} (the forwarded call
 * names no agent); that 400 went to the agent, counted against nothing, and the candidate was never rolled
 * back. The node's own listener is now refused at registration; any other gateway (another node of the
 * cluster, another node, another name of this one) refuses a forwarded call with 421, which the calling
 * gateway takes for the version's upstream failure. {@code node} serves the agents; {@code other} is the
 * second node their looping versions point at.
 */
class GatewayLoopTest {
  private static GatewayTestNode node;
  private static GatewayTestNode other;

  @BeforeAll
  static void start() throws Exception {
    node = GatewayTestNode.start("gateway-loop", Map.of(
        "agentscope.training.training-runner.trigger.min-samples", 1000,
        "agentscope.training.model-update.canary-ratio", 0.5,
        "agentscope.training.model-update.steps", List.of(1.0),
        "agentscope.training.model-update.step-duration", "1h",
        "agentscope.training.model-update.min-samples-per-step", 20,
        "agentscope.training.model-update.evaluation-metrics", List.of("task-success-rate"),
        "agentscope.training.read-side.rescan-interval", "1s"));
    other = GatewayTestNode.start("gateway-loop-other", Map.of());
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
    if (other != null) other.close();
  }

  private static String otherGateway() {
    return "http://127.0.0.1:" + other.node.httpPort() + "/v1";
  }

  private static OpenAIClient client(String agent) {
    // No retries of the SDK's own: each call is one call of the gateway's.
    return OpenAIOkHttpClient.builder().apiKey("unused").baseUrl(node.uri("/v1").toString())
        .putHeader("X-Agent-Id", agent).maxRetries(0).build();
  }

  private static ChatCompletionCreateParams ask(String session) {
    return ChatCompletionCreateParams.builder().model("default").addUserMessage("Why is the sky blue?")
        .putAdditionalHeader("X-Session-Id", session).build();
  }


  @Test
  void anEndpointAtTheNodesOwnListenerIsRefusedAtRegistration() {
    int port = node.node.httpPort();
    for (String endpoint : new String[] {"http://127.0.0.1:" + port + "/v1", "http://localhost:" + port,
        "http://0.0.0.0:" + port + "/v1/chat/completions", "http://[::1]:" + port + "/v1"}) {
      Http.Response r = node.api.post("/v1/models/loop-self/versions",
          "{\"version\":\"v1\",\"artifact\":\"file:///models/v1\",\"endpoint\":\"" + endpoint + "\"}");
      assertEquals(400, r.status(), endpoint + ": " + r.body());
      String message = r.json().path("message").asText();
      assertTrue(message.startsWith("endpoint points at this node's own HTTP listener"), message);
      assertTrue(message.contains("never an OTL node's /v1"), "says what to register instead: " + message);
    }
    assertEquals(404, node.api.get("/v1/models/loop-self").status(), "nothing was registered");
  }

  @Test
  void aCallForwardedByAGatewayIsRefusedAtOnceAsALoop() {
    // No agent, no session: refused before any of them is read (it was 400 missing_agent), on any path.
    long refusedBefore = loopsRefused(node);
    Http.Response chat = node.api.postWithHeaders("/v1/chat/completions",
        "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}".getBytes(StandardCharsets.UTF_8),
        "X-OTL-Gateway-Hop", "1");
    assertEquals(421, chat.status(), chat.body());
    assertEquals("refused", chat.headers().firstValue("X-OTL-Gateway-Hop").orElse(""), "the mark the calling gateway reads");
    JsonNode error = chat.json().path("error");
    assertEquals("gateway_loop", error.path("code").asText(), chat.body());
    assertTrue(error.path("message").asText().contains("points back at an OTL gateway"), chat.body());
    Http.Response elsewhere = node.api.postWithHeaders("/api/v1/chat/completions", "{}".getBytes(StandardCharsets.UTF_8),
        "X-OTL-Gateway-Hop", "1");
    assertEquals(421, elsewhere.status(), elsewhere.body());
    assertEquals(refusedBefore + 2, loopsRefused(node), "counted where the loop ends");
  }

  @Test
  void aStableWhoseEndpointIsAnotherGatewayIsA502NamingTheLoopAndAFailedTurn() throws Exception {
    String agent = "loop-stable";
    node.servingAt(agent, otherGateway());
    InternalServerException e = assertThrows(InternalServerException.class,
        () -> client(agent).chat().completions().create(ask("loop-stable-1")));
    assertEquals(502, e.statusCode());
    String message = e.getMessage();
    assertTrue(message.contains("model version v1: loop detected: the version's registered endpoint points at an "
        + "OTL node's gateway"), message);
    assertTrue(message.contains("never to an OTL node's /v1"), "says what to set instead: " + message);
    Http.Response streamed = node.api.chat(agent, "loop-stable-2", "hi", true);
    assertEquals(502, streamed.status(), streamed.body());
    assertTrue(streamed.body().contains("loop detected"), streamed.body());

    JsonNode s = node.awaitSession("loop-stable-1", n -> n.path("messages").size() == 2);
    JsonNode answer = s.path("messages").get(1);
    assertTrue(answer.path("inference").path("error").asText().contains("loop detected"),
        "recorded as an upstream failure: " + answer);
    assertEquals(404, other.api.get("/v1/sessions/loop-stable-1").status(), "the other gateway recorded nothing");
    JsonNode v1 = node.api.get("/v1/models/" + agent + "/traffic").json().path("versions").get(0);
    assertEquals(2, v1.path("calls").asInt(), "one upstream call each, none sent again: " + v1);
    assertEquals(2, v1.path("errors").asInt(), v1.toString());
  }

  /** The calls {@code gateway} refused as a loop, from its {@code /metrics}. */
  private static long loopsRefused(GatewayTestNode gateway) {
    for (String line : gateway.api.get("/metrics").body().split("\n")) {
      if (line.startsWith("otl_gateway_loops_refused_total ")) return Long.parseLong(line.substring(line.indexOf(' ') + 1));
    }
    return 0;
  }

  @Test
  void v0AtAnotherGatewayFailsItsCallsOnceEachNamingTheModelSection() throws Exception {
    // The model section's base_url, as an AgentScope user who now points agents at a node might copy it.
    Path dir = TestDatabases.outputDir("gateway-loop-v0");
    Path toml = Files.writeString(dir.resolve("config.toml"), String.join("\n", "[model]",
        "base_url = \"" + otherGateway() + "\"", "model_name = \"gpt-4o-mini\"", "max_retries = 3", ""));
    try (TrainingNode v0Looping = TrainingNode.start(Optional.of(toml), TestDatabases.node(TestDatabases.h2(dir), true))) {
      Http api = new Http(v0Looping.httpPort());
      long refusedBefore = loopsRefused(other);
      Http.Response r = api.chat("loop-v0", "loop-v0-1", "hi", false);
      assertEquals(502, r.status(), r.body());
      String message = r.json().path("error").path("message").asText();
      assertTrue(message.startsWith("model version v0: loop detected: the AgentScope model section's base_url "
          + "(agentscope.model.base-url) points at an OTL node's gateway"), message);
      JsonNode v0 = api.get("/v1/models/loop-v0/traffic").json().path("versions").get(0);
      assertEquals(1, v0.path("errors").asInt(), v0.toString());
      assertEquals(refusedBefore + 1, loopsRefused(other), "a loop is not sent again within max_retries");
    }
  }

  @Test
  void aCandidateWhoseEndpointIsAnotherGatewayFallsBackCountsAsFailingAndIsRolledBack() throws Exception {
    String agent = "loop-canary";
    node.serving(agent);
    Http.Response v2 = node.api.post("/v1/models/" + agent + "/versions",
        "{\"version\":\"v2\",\"artifact\":\"file:///models/v2\",\"endpoint\":\"" + otherGateway() + "\"}");
    assertEquals(201, v2.status(), "another node's gateway is not this node's listener: " + v2.body());
    node.awaitState(agent, "v2", "CANARY");
    OpenAIClient client = client(agent);
    int onCandidate = 0;
    String firstOnCandidate = null;
    for (int i = 0; i < 400 && !node.stateOf(agent, "v2").equals("ROLLED_BACK"); i++) {
      String session = "loop-canary-" + i;
      String routed = node.api.get("/v1/models/" + agent + "/route?sessionId=" + session).json().path("version")
          .asText();
      HttpResponseFor<ChatCompletion> raw = client.chat().completions().withRawResponse().create(ask(session));
      assertEquals(200, raw.statusCode(), session);
      assertEquals(List.of("v1"), raw.headers().values("X-Model-Version"), session + " is answered by the stable");
      assertTrue(raw.parse().choices().get(0).message().content().orElseThrow().contains("sky"), session);
      if (routed.equals("v2") && onCandidate++ == 0) firstOnCandidate = session;
      Http.Response result = node.api.post("/v1/sessions/" + session + "/events",
          "{\"agentId\":\"" + agent + "\",\"events\":[{\"type\":\"result\",\"status\":\"SUCCESS\"}]}");
      assertEquals(202, result.status(), result.body());
      if (i % 10 == 9) Thread.sleep(1500); // the outcomes reach the rollout with the read side's rescan
    }
    assertTrue(onCandidate > 0, "some sessions were routed to the candidate");
    node.awaitState(agent, "v2", "ROLLED_BACK");
    JsonNode rolledBack = null;
    for (JsonNode v : node.api.get("/v1/models/" + agent).json().path("versions")) {
      if (v.path("version").asText().equals("v2")) rolledBack = v;
    }
    assertTrue(rolledBack.toString().contains("upstream-error-rate"), "rolled back on its errors: " + rolledBack);
    JsonNode traffic = node.api.get("/v1/models/" + agent + "/traffic").json();
    for (JsonNode v : traffic.path("versions")) {
      if (!v.path("version").asText().equals("v2")) continue;
      assertEquals(onCandidate, v.path("errors").asInt(), "each loop counts against v2: " + traffic);
      assertEquals(onCandidate, v.path("fallbacks").asInt(), traffic.toString());
    }
    JsonNode s = node.awaitSession(firstOnCandidate, n -> n.path("messages").size() == 2);
    JsonNode answer = s.path("messages").get(1);
    assertEquals("v2", answer.path("inference").path("fallbackFrom").asText(), answer.toString());
  }
}
