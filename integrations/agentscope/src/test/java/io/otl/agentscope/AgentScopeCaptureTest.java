package io.otl.agentscope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentscope.core.ReActAgent;
import io.agentscope.core.memory.InMemoryMemory;
import io.agentscope.core.message.Msg;
import io.agentscope.core.message.MsgRole;
import io.agentscope.core.model.GenerateOptions;
import io.agentscope.core.model.OpenAIChatModel;
import io.agentscope.core.tool.Toolkit;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A real AgentScope {@link ReActAgent} with one tool, its model the simulator's OpenAI-compatible
 * chat face, answers two turns; a real node (H2, HTTP on a free port) must then hold the whole
 * trajectory, desensitized, whichever door the hook used.
 */
class AgentScopeCaptureTest {
  private static TrainingNode node;
  private static TrinitySimulator simulator;

  @BeforeAll
  static void start() throws Exception {
    Path dir = TestNode.dir("agentscope");
    node = TestNode.start(dir);
    simulator = TrinitySimulator.start(node.system(),
        SimulatorSettings.defaults().withPort(0).withWorkDir(dir.resolve("simulator-face")));
  }

  @AfterAll
  static void stop() {
    if (simulator != null) simulator.stop();
    if (node != null) node.close();
  }

  /** The lines of docs/connect-agentscope.md, as they stand there. */
  private static Run runDocExample(TrainingNode node, String baseUrl) {
    // --- docs/connect-agentscope.md: begin
    Toolkit toolkit = new Toolkit();
    toolkit.registerTool(new OrderTools());
    ReActAgent agent = ReActAgent.builder().name("support-bot").sysPrompt("You are a support agent.")
        .model(OpenAIChatModel.builder().baseUrl(baseUrl).apiKey("unused").modelName("default").stream(false).build())
        .toolkit(toolkit).memory(new InMemoryMemory()).build();
    OtlTrainingHook training = OtlTraining.attach(agent, TrajectorySink.embedded(node.dataCollector()));
    agent.call(Msg.builder().role(MsgRole.USER).textContent("Use the tool: where is order 4711? Mail me at jo@example.com").build()).block();
    agent.call(Msg.builder().role(MsgRole.USER).textContent("Thanks, that is all.").build()).block();
    training.thumbs(agent, true);
    training.complete(agent, true, "answered");
    // --- docs/connect-agentscope.md: end
    return new Run(agent, training);
  }

  private record Run(ReActAgent agent, OtlTrainingHook training) {}

  @Test
  void theDocExampleRecordsTheCompleteTrajectoryDesensitizedThroughTheEmbeddedCollector() throws Exception {
    Run run = runDocExample(node, simulator.baseUrl() + "/v1");
    ReActAgent agent = run.agent();
    OtlTrainingHook training = run.training();
    assertTrue(training.flush(Duration.ofSeconds(30)), "the hook's buffer drains");
    assertTrajectory(agent.getAgentId(), "support-bot", training);
    JsonNode done = TestNode.session(node, agent.getAgentId(), n -> n.path("status").asText().equals("COMPLETED"));
    assertEquals("SUCCESS", done.path("result").path("status").asText(), done.toString());

    // The conversation was declared over: a further turn is refused by the node and counted as dropped,
    // the agent still answers, and feedback sent with it is kept (a refused merged batch is split).
    assertFalse(agent.call(Msg.builder().role(MsgRole.USER).textContent("One more thing?").build()).block()
        .getTextContent().isBlank());
    training.thumbs(agent, false);
    assertTrue(training.flush(Duration.ofSeconds(30)));
    assertTrue(training.dropped() > 0, "the refused turn is counted");
    JsonNode after = TestNode.session(node, agent.getAgentId(), n -> n.path("feedback").size() == 2);
    assertEquals(5, after.path("messages").size(), "nothing of the refused turn is stored: " + after);
    training.close();
  }

  @Test
  void theHttpSinkRecordsTheSameTrajectoryOnARemoteNode() throws Exception {
    ReActAgent agent = agent("support-bot-http");
    String sessionId = "as-http-" + agent.getAgentId();
    OtlTrainingHook training = OtlTraining.builder(TrajectorySink.http("http://127.0.0.1:" + node.httpPort()))
        .agentId("support-bot-http").sessionIds(SessionIdProvider.fixed(sessionId)).attach(agent);
    assertTwoTurnsAnswered(agent);
    training.thumbs(agent, true);
    assertTrue(training.flush(Duration.ofSeconds(30)), "the hook's buffer drains");
    assertTrajectory(sessionId, "support-bot-http", training);
    training.close();
  }

  @Test
  void anAgentNameThatIsNoValidIdIsRecordedUnderTheIdTheOtelDoorDerives() throws Exception {
    // AgentScope names are display names ("Weather Agent"); sent as agentId as they were, the node
    // refused every batch with 400 and the hook dropped the whole conversation.
    ReActAgent agent = agent("Support Bot");
    OtlTrainingHook training = OtlTraining.attach(agent, TrajectorySink.http("http://127.0.0.1:" + node.httpPort()));
    assertTwoTurnsAnswered(agent);
    training.thumbs(agent, true);
    assertTrue(training.flush(Duration.ofSeconds(30)), "the hook's buffer drains");
    assertEquals(0, training.dropped(), "nothing refused by the node");
    assertTrajectory(agent.getAgentId(), "Support-Bot", training);
    JsonNode s = TestNode.session(node, agent.getAgentId(), n -> true);
    assertEquals("Support Bot", s.path("metadata").path("agentName").asText(), "the name itself is kept: " + s);
    training.close();
  }

  @Test
  void anAgentNameHoldingAnEmailIsNotMadeIntoAnIdThatHidesIt() throws Exception {
    // "Desk of jo@example.com" became the agent id "Desk-of-jo-example.com": the e-mail barely changed,
    // journaled as an id (ids are stored as sent) and no longer taken for an e-mail by the id check.
    ReActAgent agent = agent("Desk of jo@example.com");
    OtlTrainingHook training = OtlTraining.attach(agent, TrajectorySink.http("http://127.0.0.1:" + node.httpPort()));
    assertTwoTurnsAnswered(agent);
    assertTrue(training.flush(Duration.ofSeconds(30)), "the hook's buffer drains");
    assertEquals(0, training.delivered(), "the node refused the name as the agent id");
    assertTrue(training.dropped() > 0, "and the hook counted the refusal");
    java.net.http.HttpResponse<String> s = java.net.http.HttpClient.newHttpClient().send(
        java.net.http.HttpRequest.newBuilder(java.net.URI.create(
            "http://127.0.0.1:" + node.httpPort() + "/v1/sessions/" + agent.getAgentId())).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(404, s.statusCode(), s.body());
    training.close();
  }

  @Test
  void aDeadNodeNeverFailsTheAgentAndTheDropCounterRises() throws Exception {
    int closed;
    try (ServerSocket s = new ServerSocket(0)) {
      closed = s.getLocalPort();
    }
    ReActAgent agent = agent("dead-node-bot");
    OtlTrainingHook training = OtlTraining.builder(TrajectorySink.http("http://127.0.0.1:" + closed, "secret-token"))
        .bufferCapacity(2).retries(2, Duration.ofMillis(20)).attach(agent);
    assertTwoTurnsAnswered(agent);
    training.rate(agent, 4);
    assertTrue(training.flush(Duration.ofSeconds(30)), "every batch ends delivered or dropped");
    assertTrue(training.dropped() > 0, "events are dropped and counted");
    assertEquals(0, training.delivered());
    assertTrue(training.failedAttempts() > 0);
    training.close();
  }

  @Test
  void aNodeThatNeverAnswersDoesNotHoldTheAgentBack() throws Exception {
    // A sink whose deliveries never complete: the sender is stuck on its first batch, the buffer fills.
    TrajectorySink blackHole = (session, agentId, events) -> new CompletableFuture<>();
    ReActAgent agent = agent("stuck-node-bot");
    OtlTrainingHook training = OtlTraining.builder(blackHole).bufferCapacity(1).retries(1, Duration.ZERO)
        .attach(agent);
    assertTwoTurnsAnswered(agent);
    assertTrue(training.dropped() > 0, "the full buffer drops instead of blocking the agent");
    assertEquals(0, training.delivered());
    training.close();
  }

  @Test
  void batchesSentTwiceAreStoredOnce() throws Exception {
    // Every batch reaches the node twice, as after a lost acknowledgement: event ids make the resend a no-op.
    TrajectorySink embedded = TrajectorySink.embedded(node.dataCollector());
    TrajectorySink twice = (session, agentId, events) -> embedded.deliver(session, agentId, events)
        .thenCompose(done -> embedded.deliver(session, agentId, events));
    ReActAgent agent = agent("twice-bot");
    OtlTrainingHook training = OtlTraining.attach(agent, twice);
    assertTwoTurnsAnswered(agent);
    training.thumbs(agent, false);
    assertTrue(training.flush(Duration.ofSeconds(30)));
    JsonNode s = TestNode.session(node, agent.getAgentId(), n -> n.path("feedback").size() == 1);
    assertEquals(5, s.path("messages").size(), "the system prompt once, two turns: " + s);
    assertEquals(1, s.path("toolCalls").size(), s.toString());
    assertEquals(1, s.path("steps").size(), s.toString());
    assertEquals("THUMBS_DOWN", s.path("feedback").get(0).path("kind").asText());
    training.close();
  }

  @Test
  void aFailingToolIsRecordedAsAnUnsuccessfulCall() throws Exception {
    Toolkit toolkit = new Toolkit();
    toolkit.registerTool(new FailingTools());
    ReActAgent agent = ReActAgent.builder().name("failing-tool-bot").sysPrompt("You are a support agent.")
        .model(OpenAIChatModel.builder().baseUrl(simulator.baseUrl() + "/v1").apiKey("unused").modelName("default")
            .stream(false).build())
        .toolkit(toolkit).memory(new InMemoryMemory()).build();
    OtlTrainingHook training = OtlTraining.attach(agent, TrajectorySink.embedded(node.dataCollector()));
    assertTwoTurnsAnswered(agent);
    assertTrue(training.flush(Duration.ofSeconds(30)));
    JsonNode s = TestNode.session(node, agent.getAgentId(), n -> n.path("messages").size() == 5);
    assertEquals(1, s.path("toolCalls").size(), s.toString());
    JsonNode call = s.path("toolCalls").get(0);
    assertFalse(call.path("success").asBoolean(true), "the tool failed: " + call);
    assertTrue(call.path("output").asText().contains("warehouse system offline"), call.toString());
    training.close();
  }

  private static ReActAgent agent(String name) {
    Toolkit toolkit = new Toolkit();
    toolkit.registerTool(new OrderTools());
    return ReActAgent.builder().name(name).sysPrompt("You are a support agent.")
        .model(OpenAIChatModel.builder().baseUrl(simulator.baseUrl() + "/v1").apiKey("unused").modelName("default")
            .stream(false).build())
        .toolkit(toolkit).memory(new InMemoryMemory()).build();
  }

  @Test
  void eventTimesAreWhenTheAgentActedNotWhenTheirBatchArrived() throws Exception {
    // Batches reach the node late (buffered, retried, a slow link): here they are held until after the
    // calls returned. Events sent without a time were stamped with their batch's arrival.
    CountDownLatch link = new CountDownLatch(1);
    ExecutorService slowLink = Executors.newSingleThreadExecutor();
    TrajectorySink http = TrajectorySink.http("http://127.0.0.1:" + node.httpPort());
    TrajectorySink held = (sid, aid, events) -> CompletableFuture.runAsync(() -> {
      try {
        link.await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }, slowLink).thenCompose(x -> http.deliver(sid, aid, events));
    ReActAgent agent = agent("support-bot-times");
    String sessionId = "as-times-" + agent.getAgentId();
    OtlTrainingHook training = OtlTraining.builder(held).agentId("support-bot-times")
        .sessionIds(SessionIdProvider.fixed(sessionId)).attach(agent);
    Instant before = Instant.now();
    assertTwoTurnsAnswered(agent);
    Instant answered = Instant.now();
    Thread.sleep(50);
    link.countDown();
    assertTrue(training.flush(Duration.ofSeconds(30)), "the hook's buffer drains");
    JsonNode s = TestNode.session(node, sessionId, n -> n.path("messages").size() >= 4);
    Instant previous = before;
    for (JsonNode m : s.path("messages")) {
      Instant at = Instant.parse(m.path("at").asText());
      assertFalse(at.isAfter(answered), "stamped when it happened, not on arrival: " + m);
      assertFalse(at.isBefore(previous), "in the order they happened: " + s.path("messages"));
      previous = at;
    }
    Instant tool = Instant.parse(s.path("toolCalls").get(0).path("at").asText());
    assertFalse(tool.isAfter(answered) || tool.isBefore(before), s.path("toolCalls").toString());
    training.close();
    slowLink.shutdown();
  }

  private static void assertTwoTurnsAnswered(ReActAgent agent) {
    Msg first = agent.call(Msg.builder().role(MsgRole.USER)
        .textContent("Use the tool: where is order 4711? Mail me at jo@example.com").build()).block();
    Msg second = agent.call(Msg.builder().role(MsgRole.USER).textContent("Thanks, that is all.").build()).block();
    assertNotNull(first);
    assertFalse(first.getTextContent().isBlank(), "the agent answered the first turn");
    assertNotNull(second);
    assertFalse(second.getTextContent().isBlank(), "the agent answered the second turn");
  }

  private static void assertTrajectory(String sessionId, String agentId, OtlTrainingHook training) throws Exception {
    JsonNode s = TestNode.session(node, sessionId,
        n -> n.path("messages").size() >= 5 && n.path("feedback").size() == 1);
    assertEquals(agentId, s.path("agentId").asText());
    JsonNode messages = s.path("messages");
    assertEquals(5, messages.size(), "the system prompt, two user messages and two replies: " + messages);
    assertEquals("system", messages.get(0).path("role").asText(), "the sysPrompt the model saw comes first");
    assertEquals("You are a support agent.", messages.get(0).path("content").asText());
    assertEquals("user", messages.get(1).path("role").asText());
    assertTrue(messages.get(1).path("content").asText().contains("[EMAIL]"), messages.get(1).toString());
    assertEquals("assistant", messages.get(2).path("role").asText());
    assertFalse(messages.get(2).path("msgId").asText().isEmpty(), "the reply carries AgentScope's message id");
    assertTrue(messages.get(2).has("latencyMs"), "the reply's latency is recorded: " + messages.get(2));
    assertEquals("user", messages.get(3).path("role").asText());
    assertEquals("Thanks, that is all.", messages.get(3).path("content").asText());
    assertEquals("assistant", messages.get(4).path("role").asText());
    assertOfferedToolsStored(s);

    JsonNode tools = s.path("toolCalls");
    assertEquals(1, tools.size(), "the first turn called the tool once: " + tools);
    JsonNode call = tools.get(0);
    assertEquals("lookup_order", call.path("toolName").asText());
    assertEquals("shipped", call.path("output").path("status").asText(), "the tool's JSON answer: " + call);
    assertTrue(call.path("success").asBoolean());
    assertTrue(call.has("latencyMs"), call.toString());
    assertFalse(call.path("input").toString().contains("jo@example.com"), "tool input desensitized: " + call);

    JsonNode steps = s.path("steps");
    assertEquals(1, steps.size(), "one reasoning step chose the tool: " + steps);
    assertTrue(steps.get(0).path("action").asText().startsWith("lookup_order("), steps.toString());

    assertEquals("THUMBS_UP", s.path("feedback").get(0).path("kind").asText());
    assertFalse(s.toString().contains("jo@example.com"), "no raw PII is stored: " + s);
    assertEquals(0, training.dropped(), "nothing dropped with a healthy node");
    assertNotNull(s.path("sessionId").asText());
  }

  /** The session's metadata {@code tools} holds what the model was offered, in the gateway's form. */
  private static void assertOfferedToolsStored(JsonNode session) throws Exception {
    String text = session.path("metadata").path("tools").asText();
    assertFalse(text.isEmpty(), "the tool schemas are stored: " + session.path("metadata"));
    JsonNode tools = new com.fasterxml.jackson.databind.ObjectMapper().readTree(text);
    assertEquals(1, tools.size(), tools.toString());
    assertEquals("function", tools.get(0).path("type").asText());
    JsonNode fn = tools.get(0).path("function");
    assertEquals("lookup_order", fn.path("name").asText());
    assertEquals("Finds an order and tells where it is", fn.path("description").asText());
    assertEquals("object", fn.path("parameters").path("type").asText(), fn.toString());
    assertEquals("the order number or the question",
        fn.path("parameters").path("properties").path("query").path("description").asText(), fn.toString());
  }

  @Test
  void theSftExportOfAHookSessionHasTheSystemPromptAndTheToolSchemas() throws Exception {
    // The export renders a session's system message and its metadata tools; hook sessions had neither,
    // so a model trained on them never saw the prompt or the tool definitions it had at inference.
    ReActAgent agent = agent("export-bot");
    OtlTrainingHook training = OtlTraining.attach(agent, TrajectorySink.http("http://127.0.0.1:" + node.httpPort()));
    assertTwoTurnsAnswered(agent);
    training.thumbs(agent, true);
    training.complete(agent, true, "answered");
    assertTrue(training.flush(Duration.ofSeconds(30)));
    TestNode.session(node, agent.getAgentId(), n -> n.path("status").asText().equals("COMPLETED"));
    java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
        java.net.http.HttpRequest.newBuilder(java.net.URI.create(
            "http://127.0.0.1:" + node.httpPort() + "/v1/exports/export-bot?format=sft"))
            .POST(java.net.http.HttpRequest.BodyPublishers.noBody()).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    String[] lines = r.body().split("\n");
    JsonNode line = new com.fasterxml.jackson.databind.ObjectMapper().readTree(lines[lines.length - 1]);
    JsonNode first = line.path("messages").get(0);
    assertEquals("system", first.path("role").asText(), line.toString());
    assertEquals("You are a support agent.", first.path("content").asText());
    JsonNode fn = line.path("tools").get(0).path("function");
    assertEquals("lookup_order", fn.path("name").asText(), line.path("tools").toString());
    assertEquals("Finds an order and tells where it is", fn.path("description").asText(), fn.toString());
    assertTrue(fn.path("parameters").path("properties").has("query"), "the declared schema, not one derived: " + fn);
    training.close();
  }

  @Test
  void aConversationRestoredIntoANewAgentStoresItsSystemPromptOnce() throws Exception {
    // A server restores a conversation into a new agent (and a new hook) under the same session id: the
    // system prompt's id comes from its text, so the second agent's copy is a duplicate, not a 2nd prompt.
    String sessionId = "as-restored-" + java.util.UUID.randomUUID();
    for (int i = 0; i < 2; i++) {
      ReActAgent agent = agent("restored-bot");
      try (OtlTrainingHook training = OtlTraining.builder(TrajectorySink.embedded(node.dataCollector()))
          .sessionIds(SessionIdProvider.fixed(sessionId)).attach(agent)) {
        assertFalse(agent.call(Msg.builder().role(MsgRole.USER).textContent("Hello number " + i).build()).block()
            .getTextContent().isBlank());
        assertTrue(training.flush(Duration.ofSeconds(30)));
        assertEquals(0, training.dropped());
      }
    }
    JsonNode s = TestNode.session(node, sessionId, n -> n.path("messages").size() >= 5);
    JsonNode messages = s.path("messages");
    assertEquals(5, messages.size(), "one system prompt, two turns: " + messages);
    assertEquals("system", messages.get(0).path("role").asText());
    for (int i = 1; i < messages.size(); i++) {
      assertFalse(messages.get(i).path("role").asText().equals("system"), "a second system prompt: " + messages);
    }
  }

  /** The gateway lines of docs/connect-agentscope.md, as they stand there. */
  private static void runGatewayDocExample(String nodeUrl, String conversationId) {
    Toolkit toolkit = new Toolkit();
    toolkit.registerTool(new OrderTools());
    // --- docs/connect-agentscope.md gateway: begin
    GenerateOptions headers = GenerateOptions.builder()
        .additionalHeader("X-Agent-Id", "support-bot")        // the node's agentId
        .additionalHeader("X-Session-Id", conversationId)     // one session per conversation
        .build();
    ReActAgent agent = ReActAgent.builder().name("support-bot").sysPrompt("You are a support agent.")
        .model(OpenAIChatModel.builder().baseUrl(nodeUrl + "/v1").apiKey("unused").modelName("default").stream(false)
            .generateOptions(headers).build())
        .toolkit(toolkit).memory(new InMemoryMemory()).build();
    agent.call(Msg.builder().role(MsgRole.USER).textContent("Use the tool: where is order 4711?").build()).block();
    OtlTrainingHook training = OtlTraining.builder(TrajectorySink.http(nodeUrl)).agentId("support-bot").build();
    training.thumbs(conversationId, true);
    // --- docs/connect-agentscope.md gateway: end
    try {
      assertTrue(training.flush(Duration.ofSeconds(30)));
      assertEquals(0, training.dropped(), "the feedback reached the gateway's session");
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    } finally {
      training.close();
    }
  }

  @Test
  void theGatewayDocExampleRecordsTheAgentsCallsWithItsHeaders() throws Exception {
    // The model's GenerateOptions.additionalHeader sends X-Agent-Id and X-Session-Id with every call: the
    // gateway routes the calls to the agent's version and records them in that session.
    String nodeUrl = "http://127.0.0.1:" + node.httpPort();
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    java.net.http.HttpResponse<String> registered = http.send(java.net.http.HttpRequest.newBuilder(
            java.net.URI.create(nodeUrl + "/v1/models/support-bot/versions"))
        .header("Content-Type", "application/json")
        .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"version\":\"v1\",\"artifact\":\"file:///models/v1\","
            + "\"endpoint\":\"" + simulator.baseUrl() + "/v1\"}")).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(201, registered.statusCode(), registered.body());
    String conversationId = "conv-" + java.util.UUID.randomUUID();
    runGatewayDocExample(nodeUrl, conversationId);
    JsonNode s = TestNode.session(node, conversationId, n -> n.path("feedback").size() == 1);
    assertEquals("support-bot", s.path("agentId").asText());
    assertEquals("gateway", s.path("metadata").path("source").asText(), s.toString());
    assertEquals("v1", s.path("modelVersion").asText(), s.toString());
    JsonNode messages = s.path("messages");
    assertEquals("system", messages.get(0).path("role").asText(), messages.toString());
    assertEquals("You are a support agent.", messages.get(0).path("content").asText());
    assertEquals("user", messages.get(1).path("role").asText(), messages.toString());
    assertEquals("assistant", messages.get(messages.size() - 1).path("role").asText(), messages.toString());
    assertTrue(s.path("metadata").path("tools").asText().contains("lookup_order"), s.path("metadata").toString());
    assertEquals("THUMBS_UP", s.path("feedback").get(0).path("kind").asText());
  }

  @Test
  void aGatewayAgentRatesOneAnswerByItsReplyId() throws Exception {
    // Trial t123: an agent whose OpenAIChatModel calls the gateway could rate only the whole session
    // through the hook; the reply's Msg id is the completion's id, which the gateway records as the
    // answer's msgId, so feedback(…, msgId) rates that answer (a rated-down answer ends the SFT line).
    String nodeUrl = "http://127.0.0.1:" + node.httpPort();
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    java.net.http.HttpResponse<String> registered = http.send(java.net.http.HttpRequest.newBuilder(
            java.net.URI.create(nodeUrl + "/v1/models/rate-bot/versions"))
        .header("Content-Type", "application/json")
        .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"version\":\"v1\",\"artifact\":\"file:///models/v1\","
            + "\"endpoint\":\"" + simulator.baseUrl() + "/v1\"}")).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(201, registered.statusCode(), registered.body());
    String conversationId = "rate-" + java.util.UUID.randomUUID();
    Toolkit toolkit = new Toolkit();
    toolkit.registerTool(new OrderTools());
    GenerateOptions headers = GenerateOptions.builder()
        .additionalHeader("X-Agent-Id", "rate-bot").additionalHeader("X-Session-Id", conversationId).build();
    ReActAgent agent = ReActAgent.builder().name("rate-bot").sysPrompt("You are a support agent.")
        .model(OpenAIChatModel.builder().baseUrl(nodeUrl + "/v1").apiKey("unused").modelName("default").stream(true)
            .generateOptions(headers).build())
        .toolkit(toolkit).memory(new InMemoryMemory()).build();
    Msg first = agent.call(Msg.builder().role(MsgRole.USER).textContent("Use the tool: where is order 4711?").build()).block();
    Msg second = agent.call(Msg.builder().role(MsgRole.USER).textContent("And when does it arrive?").build()).block();
    try (OtlTrainingHook training = OtlTraining.builder(TrajectorySink.http(nodeUrl)).agentId("rate-bot").build()) {
      training.feedback(conversationId, "THUMBS_DOWN", null, "fb-second", second.getId());
      assertTrue(training.flush(Duration.ofSeconds(30)));
      assertEquals(0, training.dropped(), "the node took the reply's id as the msgId of a recorded answer");
      training.feedback(conversationId, "THUMBS_UP", null, "fb-unknown", "chatcmpl-no-such-answer");
      assertTrue(training.flush(Duration.ofSeconds(30)));
      assertEquals(1, training.dropped(), "a msgId of no recorded answer is refused (404) and counted");
    }
    JsonNode s = TestNode.session(node, conversationId, n -> n.path("feedback").size() == 1);
    List<String> answerIds = s.path("messages").findValuesAsText("msgId");
    assertTrue(answerIds.contains(first.getId()) && answerIds.contains(second.getId()), s.toString());
    JsonNode fb = s.path("feedback").get(0);
    assertEquals("THUMBS_DOWN", fb.path("kind").asText());
    assertEquals(second.getId(), fb.path("msgId").asText(), s.toString());
  }

  /** What a structured-output call asks the agent for. */
  public static class OrderReport {
    public String summary;
    public int items;
  }

  @Test
  void aStructuredOutputCallThroughTheGatewayIsAnsweredOnTheEmbeddedDefault() throws Exception {
    // Trial t123: ReActAgent.call(msgs, Class) offers generate_response(response: object) and forces it; the
    // simulator put the user's text in the object parameter, AgentScope refused it three times ("string found,
    // object expected") and the reply had no structured data.
    String nodeUrl = "http://127.0.0.1:" + node.httpPort();
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    java.net.http.HttpResponse<String> registered = http.send(java.net.http.HttpRequest.newBuilder(
            java.net.URI.create(nodeUrl + "/v1/models/struct-bot/versions"))
        .header("Content-Type", "application/json")
        .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"version\":\"v1\",\"artifact\":\"file:///models/v1\","
            + "\"endpoint\":\"" + simulator.baseUrl() + "/v1\"}")).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(201, registered.statusCode(), registered.body());
    String conversationId = "struct-" + java.util.UUID.randomUUID();
    Toolkit toolkit = new Toolkit();
    toolkit.registerTool(new OrderTools());
    GenerateOptions headers = GenerateOptions.builder()
        .additionalHeader("X-Agent-Id", "struct-bot").additionalHeader("X-Session-Id", conversationId).build();
    ReActAgent agent = ReActAgent.builder().name("struct-bot").sysPrompt("You are a support agent.")
        .model(OpenAIChatModel.builder().baseUrl(nodeUrl + "/v1").apiKey("unused").modelName("default").stream(false)
            .generateOptions(headers).build())
        .toolkit(toolkit).memory(new InMemoryMemory()).build();
    Msg reply = agent.call(List.of(Msg.builder().role(MsgRole.USER).textContent("Report on order 4711").build()),
        OrderReport.class).block();
    assertTrue(reply.hasStructuredData(), "structured data in the reply: " + reply);
    OrderReport report = reply.getStructuredData(OrderReport.class);
    // The call that answers is the one AgentScope forces after its reminder ("Please call the
    // 'generate_response' function …", a user message): the simulator's strings are that text.
    assertTrue(report.summary != null && report.summary.contains("generate_response"), String.valueOf(report.summary));
    // The gateway stores the model's tool call with the answer that made it (docs/gateway.md, "What the session
    // records"): AgentScope makes no request after generate_response, and the session still holds the structured
    // answer, as the call's arguments, awaiting a result that never comes. Before review t124 it held only the
    // forcing call's empty assistant message.
    JsonNode s = TestNode.session(node, conversationId, n -> n.path("toolCalls").findValuesAsText("toolName")
        .contains("generate_response"));
    JsonNode last = s.path("messages").get(s.path("messages").size() - 1);
    assertEquals("tool_calls", last.path("inference").path("finishReason").asText(), s.toString());
    JsonNode answer = null;
    for (JsonNode c : s.path("toolCalls")) {
      if ("generate_response".equals(c.path("toolName").asText())) answer = c;
    }
    assertTrue(answer.path("awaitingResult").asBoolean(), answer.toString());
    assertTrue(answer.path("output").isNull(), answer.toString());
    assertTrue(answer.path("input").findValuesAsText("summary").contains(report.summary),
        "the structured answer is the call's input: " + answer);
  }

  @Test
  void theHookAndTheGatewayOnOneSessionStoreEachMessageOnce() throws Exception {
    // Trial t41: an agent whose model calls the node's gateway with X-Session-Id and whose hook writes to
    // that same session had every user message, answer and tool call stored twice, once per door, and
    // its SFT line held two system prompts and two tool results per call.
    String nodeUrl = "http://127.0.0.1:" + node.httpPort();
    java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
    java.net.http.HttpResponse<String> registered = http.send(java.net.http.HttpRequest.newBuilder(
            java.net.URI.create(nodeUrl + "/v1/models/both-bot/versions"))
        .header("Content-Type", "application/json")
        .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"version\":\"v1\",\"artifact\":\"file:///models/v1\","
            + "\"endpoint\":\"" + simulator.baseUrl() + "/v1\"}")).build(),
        java.net.http.HttpResponse.BodyHandlers.ofString());
    assertEquals(201, registered.statusCode(), registered.body());
    String conversationId = "both-" + java.util.UUID.randomUUID();
    Toolkit toolkit = new Toolkit();
    toolkit.registerTool(new OrderTools());
    GenerateOptions headers = GenerateOptions.builder()
        .additionalHeader("X-Agent-Id", "both-bot").additionalHeader("X-Session-Id", conversationId).build();
    ReActAgent agent = ReActAgent.builder().name("both-bot").sysPrompt("You are a support agent.")
        .model(OpenAIChatModel.builder().baseUrl(nodeUrl + "/v1").apiKey("unused").modelName("default").stream(false)
            .generateOptions(headers).build())
        .toolkit(toolkit).memory(new InMemoryMemory()).build();
    List<String> replyIds = new ArrayList<>();
    try (OtlTrainingHook training = OtlTraining.builder(TrajectorySink.http(nodeUrl)).agentId("both-bot")
        .sessionIds(SessionIdProvider.fixed(conversationId)).attach(agent)) {
      for (String turn : List.of("Use the tool: where is order 4711?", "yes", "yes")) {
        replyIds.add(agent.call(Msg.builder().role(MsgRole.USER).textContent(turn).build()).block().getId());
      }
      assertTrue(training.flush(Duration.ofSeconds(30)));
      assertEquals(0, training.dropped());
    }
    JsonNode s = TestNode.session(node, conversationId,
        n -> n.path("messages").findValuesAsText("msgId").containsAll(replyIds));
    JsonNode messages = s.path("messages");
    Map<String, Integer> byRoleAndText = new java.util.TreeMap<>();
    for (JsonNode m : messages) {
      if (!m.path("content").asText().isEmpty()) {
        byRoleAndText.merge(m.path("role").asText() + ": " + m.path("content").asText(), 1, Integer::sum);
      }
    }
    assertEquals(1, byRoleAndText.get("system: You are a support agent."), messages.toString());
    assertEquals(1, byRoleAndText.get("user: Use the tool: where is order 4711?"), messages.toString());
    assertEquals(2, byRoleAndText.get("user: yes"), "the user said it twice: " + messages);
    for (String id : replyIds) {
      int answers = 0;
      for (JsonNode m : messages) {
        if (id.equals(m.path("msgId").asText()) && !m.path("content").asText().isEmpty()) answers++;
      }
      assertEquals(1, answers, "answer " + id + ": " + messages);
    }
    java.util.Set<String> callIds = new java.util.HashSet<>();
    for (JsonNode t : s.path("toolCalls")) {
      assertTrue(callIds.add(t.path("callId").asText()), "tool call stored twice: " + s.path("toolCalls"));
    }
    assertFalse(callIds.isEmpty(), s.toString());
    assertEquals("v1", s.path("modelVersion").asText(), "the gateway's served version is kept: " + s);
  }
}
