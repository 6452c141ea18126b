package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.HttpResponseFor;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.InternalServerException;
import com.openai.errors.PermissionDeniedException;
import com.openai.errors.UnauthorizedException;
import com.openai.helpers.ChatCompletionAccumulator;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionAllowedToolChoice;
import com.openai.models.chat.completions.ChatCompletionAllowedTools;
import com.openai.models.chat.completions.ChatCompletionAssistantMessageParam;
import com.openai.models.chat.completions.ChatCompletionCustomTool;
import com.openai.models.chat.completions.ChatCompletionFunctionMessageParam;
import com.openai.models.chat.completions.ChatCompletionMessageCustomToolCall;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The inference gateway through the official OpenAI Java SDK, against a real node (H2 journal,
 * HTTP on a free port) whose versions are served by the simulator's chat completions face.
 */
class GatewayOpenAiSdkTest {
  private static final String KEY_A = "key-of-agent-a";
  private static final String KEY_B = "key-of-agent-b";
  private static final String KEY_C = "key-of-agent-c";
  private static final String KEY_D = "key-of-agent-d";
  private static GatewayTestNode gateway;
  private static TrinitySimulator simulator;
  private static Http api;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-test", Map.of(
        "agentscope.training.gateway.agents.agent-a.api-key", KEY_A,
        "agentscope.training.gateway.agents.agent-b.api-key", KEY_B,
        "agentscope.training.gateway.agents.agent-c.api-key", KEY_C,
        "agentscope.training.gateway.agents.agent-d.api-key", KEY_D,
        "agentscope.training.gateway.max-body-bytes", 65536,
        "agentscope.training.gateway.timeout", "5s",
        // One call at a time: the tests call one after the other, and the 429 test holds one in flight.
        "agentscope.training.gateway.max-in-flight", 1,
        "agentscope.training.gateway.capture-tokens", true));
    simulator = gateway.simulator;
    api = gateway.api;
    register("agent-a", "v1", simulator.baseUrl() + "/v1");
    register("agent-b", "v1", "http://127.0.0.1:" + closedPort() + "/v1");
    register("agent-c", "v1", simulator.baseUrl() + "/v1");
    awaitState("agent-c", "v1", "STABLE");
    register("agent-c", "v2", "http://127.0.0.1:" + closedPort() + "/v1");
    awaitState("agent-c", "v2", "CANARY");
  }

  private static void awaitState(String agent, String version, String state) throws InterruptedException {
    for (int i = 0; i < 100; i++) {
      for (JsonNode v : api.get("/v1/models/" + agent).json().path("versions")) {
        if (v.path("version").asText().equals(version) && v.path("state").asText().equals(state)) return;
      }
      Thread.sleep(100);
    }
    throw new AssertionError(agent + " " + version + " never reached " + state);
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  private static void register(String agent, String version, String endpoint) {
    Http.Response r = api.post("/v1/models/" + agent + "/versions",
        "{\"version\":\"" + version + "\",\"artifact\":\"file:///models/" + version + "\",\"endpoint\":\"" + endpoint
            + "\"}");
    assertEquals(201, r.status(), r.body());
  }

  private static int closedPort() {
    return io.otl.node.testing.FreePorts.take();
  }

  private static OpenAIClient client(String key) {
    return OpenAIOkHttpClient.builder().apiKey(key).baseUrl(gateway.uri("/v1").toString())
        .maxRetries(0).build();
  }

  /** The session as the API stores it, once {@code ready} holds (recording after a stream is asynchronous). */

  @Test
  void nonStreamingCallsAreForwardedAndTheSessionStoresEachMessageOnceDesensitized() throws Exception {
    OpenAIClient client = client(KEY_A);
    ChatCompletionCreateParams first = ChatCompletionCreateParams.builder().model("default")
        .addSystemMessage("You are a support agent.")
        .addUserMessage("My mail is jane.doe@example.com, please help")
        .build();
    HttpResponseFor<ChatCompletion> raw = client.chat().completions().withRawResponse().create(first);
    ChatCompletion answer = raw.parse();
    String sessionId = raw.headers().values("X-Session-Id").get(0);
    assertTrue(sessionId.startsWith("gw-"), "a new session id is made and returned: " + sessionId);
    assertEquals(List.of("v1"), raw.headers().values("X-Model-Version"));
    String content = answer.choices().get(0).message().content().orElseThrow();
    assertTrue(content.contains("jane.doe@example.com"), "what is forwarded is never desensitized: " + content);
    assertEquals("default", answer.model(), "the simulator echoes the model it was sent");

    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 3);
    assertEquals("agent-a", s.path("agentId").asText());
    assertEquals("v1", s.path("modelVersion").asText());
    assertEquals("gateway", s.path("metadata").path("source").asText());
    JsonNode messages = s.path("messages");
    assertEquals("system", messages.get(0).path("role").asText());
    assertTrue(messages.get(1).path("content").asText().contains("[EMAIL]"), messages.get(1).toString());
    assertFalse(s.toString().contains("jane.doe@example.com"), "no raw PII is stored");
    JsonNode reply = messages.get(2);
    assertEquals("assistant", reply.path("role").asText());
    // Stored like every id a client names: desensitized (the simulator's random hex ids hold a
    // 15-digit run now and then, which is stored masked; feedback names the id in that form too).
    assertEquals(storedId(answer.id()), reply.path("msgId").asText(), "msgId is the response id as stored");
    assertEquals("v1", reply.path("inference").path("modelVersion").asText());
    assertEquals("stop", reply.path("inference").path("finishReason").asText());
    assertTrue(reply.path("inference").path("promptTokens").asInt() > 0);

    // The next turn resends the history: only the new user message and the answer are added.
    ChatCompletionCreateParams second = ChatCompletionCreateParams.builder().model("default")
        .addSystemMessage("You are a support agent.")
        .addUserMessage("My mail is jane.doe@example.com, please help")
        .addMessage(answer.choices().get(0).message())
        .addUserMessage("Thanks, and one more thing")
        .putAdditionalHeader("X-Session-Id", sessionId)
        .build();
    HttpResponseFor<ChatCompletion> raw2 = client.chat().completions().withRawResponse().create(second);
    assertEquals(List.of(sessionId), raw2.headers().values("X-Session-Id"));
    ChatCompletion answer2 = raw2.parse();
    JsonNode after = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 5);
    assertEquals("Thanks, and one more thing", after.path("messages").get(3).path("content").asText());
    assertEquals(storedId(answer2.id()), after.path("messages").get(4).path("msgId").asText());

    // An agent that slides its context window drops old turns: what is new is still found.
    client.chat().completions().create(ChatCompletionCreateParams.builder().model("default")
        .addSystemMessage("You are a support agent.")
        .addUserMessage("Thanks, and one more thing")
        .addMessage(answer2.choices().get(0).message())
        .addUserMessage("Last question")
        .putAdditionalHeader("X-Session-Id", sessionId)
        .build());
    JsonNode slid = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 7);
    assertEquals("Last question", slid.path("messages").get(5).path("content").asText());
    assertEquals(1, slid.path("messages").findValues("role").stream().filter(r -> r.asText().equals("system")).count(),
        "the system prompt is stored once");
  }

  @Test
  void streamingPassesTheEventsThroughAndRecordsTheAnswer() throws Exception {
    OpenAIClient client = client(KEY_A);
    String sessionId = "stream-" + UUID.randomUUID();
    ChatCompletionCreateParams params = ChatCompletionCreateParams.builder().model("default")
        .addUserMessage("Stream me an answer")
        .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build())
        .logprobs(true)
        .putAdditionalHeader("X-Session-Id", sessionId)
        .build();
    StringBuilder text = new StringBuilder();
    String id;
    long completionTokens = -1;
    try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(params)) {
      List<ChatCompletionChunk> chunks = stream.stream().toList();
      id = chunks.get(0).id();
      for (ChatCompletionChunk c : chunks) {
        c.choices().forEach(ch -> ch.delta().content().ifPresent(text::append));
        if (c.usage().isPresent()) completionTokens = c.usage().get().completionTokens();
      }
    }
    assertTrue(text.toString().contains("Stream me an answer"), text.toString());
    assertTrue(completionTokens > 0, "the usage chunk came through");
    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 2);
    JsonNode reply = s.path("messages").get(1);
    assertEquals(text.toString(), reply.path("content").asText());
    assertEquals(id, reply.path("msgId").asText());
    assertEquals(completionTokens, reply.path("inference").path("completionTokens").asLong());
    assertTrue(reply.path("inference").path("tokenIds").size() > 0, "capture-tokens keeps token ids: " + reply);
    assertTrue(reply.path("inference").path("logprobs").size() > 0);
  }

  @Test
  void toolCallsAreForwardedAndRecorded() throws Exception {
    OpenAIClient client = client(KEY_A);
    String sessionId = "tools-" + UUID.randomUUID();
    ChatCompletionFunctionTool weather = ChatCompletionFunctionTool.builder().function(FunctionDefinition.builder()
        .name("get_weather")
        .parameters(FunctionParameters.builder()
            .putAdditionalProperty("type", JsonValue.from("object"))
            .putAdditionalProperty("properties", JsonValue.from(Map.of("city", Map.of("type", "string"))))
            .build())
        .build()).build();
    ChatCompletionCreateParams ask = ChatCompletionCreateParams.builder().model("default")
        .addUserMessage("Use get_weather for Paris")
        .addTool(weather)
        .putAdditionalHeader("X-Session-Id", sessionId)
        .build();
    ChatCompletion call = client.chat().completions().create(ask);
    assertEquals(ChatCompletion.Choice.FinishReason.TOOL_CALLS, call.choices().get(0).finishReason());
    ChatCompletionMessageFunctionToolCall toolCall =
        call.choices().get(0).message().toolCalls().orElseThrow().get(0).asFunction();
    assertEquals("get_weather", toolCall.function().name());

    ChatCompletionCreateParams answer = ChatCompletionCreateParams.builder().model("default")
        .addUserMessage("Use get_weather for Paris")
        .addMessage(call.choices().get(0).message())
        .addMessage(ChatCompletionToolMessageParam.builder().toolCallId(toolCall.id()).content("sunny, 21 C").build())
        .addTool(weather)
        .putAdditionalHeader("X-Session-Id", sessionId)
        .build();
    client.chat().completions().create(answer);

    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 3 && n.path("toolCalls").size() == 1);
    JsonNode stored = s.path("toolCalls").get(0);
    assertEquals("get_weather", stored.path("toolName").asText());
    assertEquals(toolCall.id(), stored.path("callId").asText());
    assertEquals("Use get_weather for Paris", stored.path("input").path("city").asText());
    assertEquals("sunny, 21 C", stored.path("output").asText(), "the tool message is the call's output");
    JsonNode asked = s.path("messages").get(1);
    assertEquals(storedId(call.id()), asked.path("msgId").asText());
    assertEquals("tool_calls", asked.path("inference").path("finishReason").asText());
    assertTrue(s.path("metadata").path("tools").asText().contains("get_weather"), "tool schemas are stored once");
  }

  /**
   * OpenAI's custom tools (free-text input), their calls in the history, and an {@code allowed_tools}
   * tool choice, as the SDK sends them: the gateway refused all three with 400 (its checks knew function
   * tools only), though it forwards fields it does not know. Now they are forwarded, and a custom
   * tool's call is recorded with its input text when its result comes back.
   */
  @Test
  void customToolsAndAnAllowedToolsChoiceAreForwardedAndTheirCallsRecorded() throws Exception {
    OpenAIClient client = client(KEY_A);
    String sessionId = "custom-tools-" + UUID.randomUUID();
    ChatCompletionCustomTool codeExec = ChatCompletionCustomTool.builder().custom(ChatCompletionCustomTool.Custom
        .builder().name("code_exec").description("runs Python").build()).build();
    ChatCompletionAllowedToolChoice onlyCodeExec = ChatCompletionAllowedToolChoice.builder()
        .allowedTools(ChatCompletionAllowedTools.builder().mode(ChatCompletionAllowedTools.Mode.AUTO)
            .addTool(ChatCompletionAllowedTools.Tool.builder()
                .putAdditionalProperty("type", JsonValue.from("custom"))
                .putAdditionalProperty("custom", JsonValue.from(Map.of("name", "code_exec"))).build())
            .build())
        .build();
    ChatCompletionCreateParams afterTheCall = ChatCompletionCreateParams.builder().model("default")
        .addUserMessage("Compute six times seven")
        .addMessage(ChatCompletionAssistantMessageParam.builder()
            .addToolCall(ChatCompletionMessageCustomToolCall.builder().id("call-custom-1")
                .custom(ChatCompletionMessageCustomToolCall.Custom.builder().name("code_exec").input("print(6 * 7)")
                    .build())
                .build())
            .build())
        .addMessage(ChatCompletionToolMessageParam.builder().toolCallId("call-custom-1").content("42").build())
        .addTool(codeExec)
        .toolChoice(onlyCodeExec)
        .putAdditionalHeader("X-Session-Id", sessionId)
        .build();
    ChatCompletion answer = client.chat().completions().create(afterTheCall);
    assertFalse(answer.choices().isEmpty());

    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("toolCalls").size() == 1 && n.path("messages").size() == 3);
    JsonNode stored = s.path("toolCalls").get(0);
    assertEquals("code_exec", stored.path("toolName").asText(), s.toString());
    assertEquals("call-custom-1", stored.path("callId").asText());
    assertEquals("print(6 * 7)", stored.path("input").asText(), "a custom tool's input is its text");
    assertEquals(42, stored.path("output").asInt());
    assertTrue(s.path("metadata").path("tools").asText().contains("code_exec"), s.toString());
  }

  /**
   * A refused answer comes back from the SDK with content null and {@code refusal} set; an agent that
   * keeps it in its history sends it so, as OpenAI takes it. The gateway refused such a turn with 400.
   */
  @Test
  void anAssistantTurnThatRefusedWithoutContentIsForwarded() throws Exception {
    String sessionId = "refusal-" + UUID.randomUUID();
    ChatCompletionCreateParams params = ChatCompletionCreateParams.builder().model("default")
        .addUserMessage("Tell me a secret")
        .addMessage(ChatCompletionAssistantMessageParam.builder().refusal("I cannot share that.").build())
        .addUserMessage("Then tell me a joke")
        .putAdditionalHeader("X-Session-Id", sessionId)
        .build();
    ChatCompletion answer = client(KEY_A).chat().completions().create(params);
    assertTrue(answer.choices().get(0).message().content().orElseThrow().contains("Then tell me a joke"));
    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 4);
    assertEquals("assistant", s.path("messages").get(1).path("role").asText(), s.toString());
  }

  /**
   * The legacy functions API (deprecated, still served): a function's result came back as a session
   * message of role tool with no tool call at all, and the {@code functions} schemas were not kept. Now
   * the result is the function_call's tool call, stored once however often the history is resent.
   */
  @Test
  void aLegacyFunctionCallIsRecordedAsAToolCallWithItsResult() throws Exception {
    OpenAIClient client = client(KEY_A);
    String sessionId = "functions-" + UUID.randomUUID();
    ChatCompletionCreateParams.Function weather = ChatCompletionCreateParams.Function.builder().name("get_weather")
        .parameters(FunctionParameters.builder().putAdditionalProperty("type", JsonValue.from("object")).build())
        .build();
    ChatCompletionAssistantMessageParam called = ChatCompletionAssistantMessageParam.builder()
        .functionCall(ChatCompletionAssistantMessageParam.FunctionCall.builder().name("get_weather")
            .arguments("{\"city\":\"Rome\"}").build())
        .build();
    ChatCompletionFunctionMessageParam result = ChatCompletionFunctionMessageParam.builder().name("get_weather")
        .content("{\"celsius\":18}").build();
    ChatCompletion first = client.chat().completions().create(ChatCompletionCreateParams.builder().model("default")
        .addUserMessage("Weather in Rome?").addMessage(called).addMessage(result).addFunction(weather)
        .putAdditionalHeader("X-Session-Id", sessionId).build());
    gateway.awaitSession(sessionId, n -> n.path("messages").size() == 3);
    client.chat().completions().create(ChatCompletionCreateParams.builder().model("default")
        .addUserMessage("Weather in Rome?").addMessage(called).addMessage(result).addMessage(first.choices().get(0)
            .message()).addUserMessage("And tomorrow?").addFunction(weather)
        .putAdditionalHeader("X-Session-Id", sessionId).build());

    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 5);
    List<String> roles = new java.util.ArrayList<>();
    s.path("messages").forEach(m -> roles.add(m.path("role").asText()));
    assertEquals(List.of("user", "assistant", "assistant", "user", "assistant"), roles, s.toString());
    assertEquals(1, s.path("toolCalls").size(), s.toString());
    JsonNode stored = s.path("toolCalls").get(0);
    assertEquals("get_weather", stored.path("toolName").asText());
    assertEquals("Rome", stored.path("input").path("city").asText());
    assertEquals(18, stored.path("output").path("celsius").asInt());
    assertEquals(s.path("messages").get(1).path("eventId").asText(), stored.path("callId").asText(),
        "the call is named by the assistant message that made it");
    assertTrue(s.path("metadata").path("tools").asText().contains("\"type\":\"function\""), s.toString());
    assertTrue(s.path("metadata").path("tools").asText().contains("get_weather"), s.toString());
  }

  @Test
  void metadataSessionIdNamesTheSession() throws Exception {
    String sessionId = "meta-" + UUID.randomUUID();
    HttpResponseFor<ChatCompletion> raw = client(KEY_A).chat().completions().withRawResponse().create(
        ChatCompletionCreateParams.builder().model("default").addUserMessage("hello")
            .metadata(ChatCompletionCreateParams.Metadata.builder()
                .putAdditionalProperty("session_id", JsonValue.from(sessionId)).build())
            .build());
    assertEquals(List.of(sessionId), raw.headers().values("X-Session-Id"));
    assertEquals(2, gateway.awaitSession(sessionId, n -> n.path("messages").size() == 2).path("messages").size());
  }

  @Test
  void badRequestsAre400InOpenAiShapeWithNothingForwardedOrStored() throws Exception {
    long before = gateway.simulatorRequests();
    String sessionId = "bad-" + UUID.randomUUID();
    BadRequestException e = assertThrows(BadRequestException.class, () -> client(KEY_A).chat().completions().create(
        ChatCompletionCreateParams.builder().model("default").addUserMessage("hi").n(0)
            .putAdditionalHeader("X-Session-Id", sessionId).build()));
    assertEquals(400, e.statusCode());
    assertEquals("n", e.param().orElse(null));
    // OpenAI's current name for the limit (max_tokens is deprecated) is checked as max_tokens is (trial t65).
    for (long limit : new long[] {0, -1}) {
      BadRequestException m = assertThrows(BadRequestException.class, () -> client(KEY_A).chat().completions()
          .create(ChatCompletionCreateParams.builder().model("default").addUserMessage("hi").maxCompletionTokens(limit)
              .putAdditionalHeader("X-Session-Id", sessionId).build()));
      assertEquals("max_completion_tokens", m.param().orElse(null));
      assertEquals("invalid_value", m.code().orElse(null));
    }

    Http raw = new Http(gateway.node.httpPort()).withToken(KEY_A);
    for (String body : List.of("{not json", "[]", "{\"model\":\"default\",\"messages\":[]}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}]}",
        "{\"model\":\"default\",\"messages\":[{\"role\":\"robot\",\"content\":\"x\"}]}",
        "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"stream\":\"yes\"}",
        "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_completion_tokens\":\"9\"}",
        "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"tools\":[{\"type\":\"x\"}]}")) {
      Http.Response r = raw.post("/v1/chat/completions", body);
      assertEquals(400, r.status(), body + " -> " + r.body());
      JsonNode error = r.json().path("error");
      assertEquals("invalid_request_error", error.path("type").asText(), r.body());
      assertFalse(error.path("message").asText().isBlank());
    }
    assertEquals(before, gateway.simulatorRequests(), "nothing was forwarded");
    assertEquals(404, api.get("/v1/sessions/" + sessionId).status(), "nothing was stored");
  }

  @Test
  void anUnknownKeyIs401AndAnotherAgentsSessionIs403() throws Exception {
    long before = gateway.simulatorRequests();
    ChatCompletionCreateParams hello = ChatCompletionCreateParams.builder().model("default").addUserMessage("hi")
        .build();
    UnauthorizedException unknown = assertThrows(UnauthorizedException.class,
        () -> client("not-a-key").chat().completions().create(hello));
    assertEquals("invalid_api_key", unknown.code().orElse(null));
    assertFalse(unknown.getMessage().contains("not-a-key"), "the key is never echoed");

    String sessionOfA = client(KEY_A).chat().completions().withRawResponse().create(hello)
        .headers().values("X-Session-Id").get(0);
    gateway.awaitSession(sessionOfA, n -> n.path("messages").size() == 2);
    long afterA = gateway.simulatorRequests();
    assertThrows(PermissionDeniedException.class, () -> client(KEY_B).chat().completions().create(
        hello.toBuilder().putAdditionalHeader("X-Session-Id", sessionOfA).build()));
    assertEquals(afterA, gateway.simulatorRequests(), "nothing forwarded for a session of another agent");
    assertEquals(before + 1, afterA);
    assertEquals(2, gateway.awaitSession(sessionOfA, n -> true).path("messages").size(), "agent-a's session is untouched");
  }

  /**
   * A session the gateway never served (recorded through the events API): its owner is read from
   * the journal before anything is forwarded, and the owner's own calls are recorded into it.
   */
  @Test
  void theOwnerOfASessionTheGatewayNeverSawIsCheckedBeforeForwarding() throws Exception {
    String sessionOfA = "gw-journal-owner-" + UUID.randomUUID();
    Http.Response stored = api.post("/v1/sessions/" + sessionOfA + "/events", """
        {"agentId":"agent-a","events":[{"type":"message","role":"user","content":"first"}]}""");
    assertEquals(202, stored.status(), stored.body());
    ChatCompletionCreateParams hello = ChatCompletionCreateParams.builder().model("default").addUserMessage("hi")
        .putAdditionalHeader("X-Session-Id", sessionOfA).build();
    long before = gateway.simulatorRequests();
    PermissionDeniedException denied = assertThrows(PermissionDeniedException.class,
        () -> client(KEY_B).chat().completions().create(hello));
    assertEquals("session_of_other_agent", denied.code().orElse(null));
    assertEquals("X-Session-Id", denied.param().orElse(null));
    // Named in the body instead, the 403 points there (it named the header the agent never sent)
    Http.Response byMetadata = new Http(gateway.node.httpPort()).withToken(KEY_B).post("/v1/chat/completions",
        "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
            + "\"metadata\":{\"session_id\":\"" + sessionOfA + "\"}}");
    assertEquals(403, byMetadata.status(), byMetadata.body());
    assertEquals("metadata.session_id", byMetadata.json().path("error").path("param").asText(), byMetadata.body());
    assertEquals(before, gateway.simulatorRequests(), "nothing forwarded for a session of another agent");
    assertEquals(1, gateway.awaitSession(sessionOfA, n -> true).path("messages").size(), "agent-a's session is untouched");

    client(KEY_A).chat().completions().create(hello);
    assertEquals(before + 1, gateway.simulatorRequests());
    JsonNode messages = gateway.awaitSession(sessionOfA, n -> n.path("messages").size() == 3).path("messages");
    assertEquals("hi", messages.get(1).path("content").asText(), "the owner's call is recorded after its history");
  }

  @Test
  void anOversizedBodyIs413() {
    long before = gateway.simulatorRequests();
    String big = "x".repeat(70_000);
    Http.Response r = new Http(gateway.node.httpPort()).withToken(KEY_A).post("/v1/chat/completions",
        "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"" + big + "\"}]}");
    assertEquals(413, r.status(), r.body());
    assertEquals("request_too_large", r.json().path("error").path("code").asText());
    assertEquals(before, gateway.simulatorRequests());
  }

  @Test
  void anUpstreamThatIsDownIs502AndTheFailureIsInTheSession() throws Exception {
    String sessionId = "down-" + UUID.randomUUID();
    InternalServerException e = assertThrows(InternalServerException.class, () -> client(KEY_B).chat().completions()
        .create(ChatCompletionCreateParams.builder().model("default").addUserMessage("anyone there?")
            .putAdditionalHeader("X-Session-Id", sessionId).build()));
    assertEquals(502, e.statusCode());
    assertEquals("upstream_unavailable", e.code().orElse(null));
    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 2);
    JsonNode failure = s.path("messages").get(1);
    assertEquals("", failure.path("content").asText());
    assertTrue(failure.path("inference").path("error").asText().contains("unreachable"), failure.toString());
    String metrics = api.get("/metrics").body();
    assertTrue(metrics.contains("otl_gateway_upstream_errors_total{agent=\"agent-b\",version=\"v1\",kind=\"connect\"}"),
        "the failure is counted against the version");
  }

  @Test
  void aClientThatDisconnectsMidStreamGetsItsPartialAnswerRecordedAsAborted() throws Exception {
    String sessionId = "abort-" + UUID.randomUUID();
    String body = "{\"model\":\"default\",\"stream\":true,\"simulator_chunk_delay_ms\":300,"
        + "\"messages\":[{\"role\":\"user\",\"content\":\"one two three four five six seven eight nine ten\"}]}";
    HttpClient http = HttpClient.newHttpClient();
    HttpResponse<InputStream> r = http.send(HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .header("Authorization", "Bearer " + KEY_A).header("X-Session-Id", sessionId)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofInputStream());
    assertEquals(200, r.statusCode());
    try (InputStream in = r.body()) {
      byte[] first = new byte[64];
      assertTrue(in.read(first) > 0, "the stream started");
    }
    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 2);
    JsonNode partial = s.path("messages").get(1);
    assertTrue(partial.path("inference").path("aborted").asBoolean(), partial.toString());
    assertFalse(partial.path("content").asText().contains("ten"), "only the part sent before the disconnect");
  }

  private static HttpResponse<String> call(String method, String path) throws Exception {
    return HttpClient.newHttpClient().send(HttpRequest.newBuilder(gateway.uri(path))
        .header("Authorization", "Bearer " + KEY_A).header("Content-Type", "application/json")
        .method(method, HttpRequest.BodyPublishers.ofString(method.equals("GET") || method.equals("DELETE") ? ""
            : "{\"metadata\":{\"k\":\"v\"}}")).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void openAisStoredCompletionsPathsAre404UnknownUrlInOpenAiShape() throws Exception {
    for (String[] c : new String[][] {{"GET", "/v1/chat/completions"}, {"GET", "/v1/chat/completions/chatcmpl-1"},
        {"POST", "/v1/chat/completions/chatcmpl-1"}, {"DELETE", "/v1/chat/completions/chatcmpl-1"},
        {"GET", "/v1/chat/completions/chatcmpl-1/messages"}}) {
      HttpResponse<String> r = call(c[0], c[1]);
      assertEquals(404, r.statusCode(), c[0] + " " + c[1] + ": " + r.body());
      JsonNode error = new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.body()).path("error");
      assertEquals("unknown_url", error.path("code").asText(), c[0] + " " + c[1] + ": " + r.body());
      assertEquals("invalid_request_error", error.path("type").asText(), r.body());
      assertFalse(error.path("message").asText().contains("chatcmpl-1"), "the id is not named back: " + r.body());
    }
    com.openai.errors.NotFoundException e = assertThrows(com.openai.errors.NotFoundException.class,
        () -> client(KEY_A).chat().completions().list());
    assertEquals("unknown_url", e.code().orElse(null));
  }

  /**
   * A base URL without {@code /v1} ({@code baseUrl("http://localhost:8080")}): the SDK's calls got the API's
   * 404 {@code {"error":"not_found"}}, which it read as {@code NotFoundException: 404: null} with no code
   * (trial t6). They are OpenAI's 404 {@code unknown_url} now, its message naming the base URL to use.
   */
  @Test
  void aBaseUrlWithoutV1Gets404UnknownUrlNamingTheBaseUrl() throws Exception {
    OpenAIClient noV1 = OpenAIOkHttpClient.builder().apiKey(KEY_A).baseUrl(gateway.uri("").toString())
        .maxRetries(0).build();
    com.openai.errors.NotFoundException e = assertThrows(com.openai.errors.NotFoundException.class,
        () -> noV1.chat().completions().create(ChatCompletionCreateParams.builder().model("default")
            .addUserMessage("hi").build()));
    assertEquals("unknown_url", e.code().orElse(null), String.valueOf(e.body()));
    assertTrue(e.getMessage().contains("/v1"), e.getMessage());
    e = assertThrows(com.openai.errors.NotFoundException.class, () -> noV1.models().list());
    assertEquals("unknown_url", e.code().orElse(null), String.valueOf(e.body()));
    for (String[] c : new String[][] {{"POST", "/embeddings"}, {"GET", "/models/default"}}) {
      HttpResponse<String> r = call(c[0], c[1]);
      assertEquals(404, r.statusCode(), c[0] + " " + c[1] + ": " + r.body());
      assertEquals("unknown_url", new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.body())
          .path("error").path("code").asText(), c[0] + " " + c[1] + ": " + r.body());
    }
  }

  /** docs/gateway.md, "Request bodies": the body is JSON whatever its Content-Type says (curl -d sends a form type). */
  @Test
  void theBodyIsReadAsJsonWhateverItsContentType() throws Exception {
    String body = "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"typed\"}]}";
    for (String type : new String[] {"application/json; charset=utf-8", "text/plain",
        "application/x-www-form-urlencoded", null}) {
      HttpRequest.Builder b = HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
          .header("Authorization", "Bearer " + KEY_A).POST(HttpRequest.BodyPublishers.ofString(body));
      if (type != null) b.header("Content-Type", type);
      HttpResponse<String> r = HttpClient.newHttpClient().send(b.build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode(), type + ": " + r.body());
      assertTrue(r.body().contains("typed"), type + ": " + r.body());
    }
  }

  @Test
  void aWrongMethodOnAGatewayPathIs405MethodNotAllowedInOpenAiShape() throws Exception {
    for (String[] c : new String[][] {{"PUT", "/v1/chat/completions", "POST"}, {"DELETE", "/v1/chat/completions", "POST"},
        {"POST", "/v1/models", "GET"}}) {
      HttpResponse<String> r = call(c[0], c[1]);
      assertEquals(405, r.statusCode(), c[0] + " " + c[1] + ": " + r.body());
      JsonNode error = new com.fasterxml.jackson.databind.ObjectMapper().readTree(r.body()).path("error");
      assertEquals("method_not_allowed", error.path("code").asText(), c[0] + " " + c[1] + ": " + r.body());
      assertEquals("invalid_request_error", error.path("type").asText(), r.body());
      assertTrue(r.headers().firstValue("Allow").orElse("").contains(c[2]), r.headers().toString());
    }
  }

  /**
   * The SDK's {@code models().delete(...)} from an agent's client: OpenAI's 405 with its code, for the
   * logical model and another model's name. Only GET was the gateway's there: the DELETE went on to the
   * API's routes, whose 405 in the API's shape the SDK raised as "405: null" with no code.
   */
  @Test
  void anAgentsModelsDeleteIs405MethodNotAllowedInOpenAiShape() {
    for (String name : List.of("default", "gpt-4o-mini")) {
      com.openai.errors.OpenAIServiceException e = assertThrows(com.openai.errors.OpenAIServiceException.class,
          () -> client(KEY_A).models().delete(name));
      assertEquals(405, e.statusCode(), name + ": " + e.getMessage());
      assertEquals("method_not_allowed", e.code().orElse(""), name + ": " + e.getMessage());
      assertEquals("invalid_request_error", e.type().orElse(""), name + ": " + e.getMessage());
      assertTrue(e.getMessage().contains("supported methods: GET"), name + ": " + e.getMessage());
      assertTrue(e.headers().values("Allow").toString().contains("GET"), name + ": " + e.headers().values("Allow"));
    }
    // The design's GET /v1/models/{agentId} stays the API's, in the API's shape, for operators.
    assertEquals("agent-a", api.get("/v1/models/agent-a").json().path("agentId").asText());
  }

  @Test
  void theListedModelCanBeRetrievedAndTheAgentViewStaysForOperators() {
    com.openai.models.models.Model model = client(KEY_A).models().retrieve("default");
    assertEquals("default", model.id());
    assertEquals("agent-a", model.ownedBy());
    // Without an agent's key or X-Agent-Id it is the design's GET /v1/models/{agentId}, for an agent named "default".
    Http.Response operator = api.get("/v1/models/default");
    assertEquals(404, operator.status(), operator.body());
    assertEquals("not_found", operator.json().path("error").asText(), operator.body());
    // Another model's name (what the agent was configured with before) is OpenAI's model_not_found, in
    // OpenAI's error object; it was the API's {"error":"not_found"} about an agent of that name.
    com.openai.errors.NotFoundException unknown = assertThrows(com.openai.errors.NotFoundException.class,
        () -> client(KEY_A).models().retrieve("gpt-4o-mini"));
    assertEquals("model_not_found", unknown.code().orElse(""), unknown.getMessage());
    assertEquals("model", unknown.param().orElse(""), unknown.getMessage());
    // The agent's own id, and any id without an agent's key, still reach the design's models view.
    assertEquals("agent-a", api.get("/v1/models/agent-a").json().path("agentId").asText());
    assertEquals("not_found", api.get("/v1/models/gpt-4o-mini").json().path("error").asText());
    // A key with a typo is a 401, as for every other gateway call, not the operator's view of the model's name
    for (String name : java.util.List.of("default", "gpt-4o-mini")) {
      com.openai.errors.UnauthorizedException wrongKey = assertThrows(com.openai.errors.UnauthorizedException.class,
          () -> client(KEY_A + "-typo").models().retrieve(name));
      assertEquals("invalid_api_key", wrongKey.code().orElse(""), name + ": " + wrongKey.getMessage());
    }
  }

  @Test
  void modelsListsTheLogicalModelAndMetricsCountPerVersion() {
    assertEquals("default", client(KEY_A).models().list().items().get(0).id());
    client(KEY_A).chat().completions().create(
        ChatCompletionCreateParams.builder().model("default").addUserMessage("count me").build());
    String metrics = api.get("/metrics").body();
    assertTrue(metrics.contains("otl_gateway_requests_total{agent=\"agent-a\",version=\"v1\",status=\"200\"}"),
        metrics);
    assertTrue(metrics.contains("otl_gateway_tokens_total{agent=\"agent-a\",version=\"v1\",kind=\"prompt\"}"));
    assertTrue(metrics.contains("otl_gateway_added_latency_seconds_count"));
  }

  @Test
  void aFailingCandidateIsCountedAndTheCallIsRetriedOnceOnTheStable() throws Exception {
    String sessionId = null;
    for (int i = 0; sessionId == null && i < 1000; i++) {
      String candidate = "canary-" + i;
      if (api.get("/v1/models/agent-c/route?sessionId=" + candidate).json().path("version").asText().equals("v2")) {
        sessionId = candidate;
      }
    }
    assertTrue(sessionId != null, "some session is routed to the 5 % canary");
    HttpResponseFor<ChatCompletion> raw = client(KEY_C).chat().completions().withRawResponse().create(
        ChatCompletionCreateParams.builder().model("default").addUserMessage("hello canary")
            .putAdditionalHeader("X-Session-Id", sessionId).build());
    assertEquals(200, raw.statusCode());
    assertEquals(List.of("v1"), raw.headers().values("X-Model-Version"), "the stable answered");
    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 2);
    assertEquals("v2", s.path("modelVersion").asText(), "the session stays the candidate's (sticky routing)");
    JsonNode call = s.path("messages").get(1).path("inference");
    assertEquals("v1", call.path("modelVersion").asText());
    assertEquals("v2", call.path("fallbackFrom").asText());
    String metrics = api.get("/metrics").body();
    assertTrue(metrics.contains("otl_gateway_upstream_errors_total{agent=\"agent-c\",version=\"v2\",kind=\"connect\"}"));
    assertTrue(metrics.contains("otl_gateway_fallbacks_total{agent=\"agent-c\",from=\"v2\"}"));
    // The per-version figures count the failed call against the candidate and the answer for the stable.
    JsonNode traffic = api.get("/v1/models/agent-c/traffic").json();
    JsonNode v1 = null;
    JsonNode v2 = null;
    for (JsonNode v : traffic.path("versions")) {
      if (v.path("version").asText().equals("v1")) v1 = v;
      if (v.path("version").asText().equals("v2")) v2 = v;
    }
    assertTrue(v2 != null && v2.path("errors").asLong() >= 1 && v2.path("fallbacks").asLong() >= 1, traffic.toString());
    assertEquals(v2.path("calls").asLong(), v2.path("errors").asLong(), "every call of the dead candidate failed");
    assertTrue(v1 != null && v1.path("calls").asLong() >= 1 && v1.path("errors").asLong() == 0, traffic.toString());
    assertTrue(v1.path("latencyMs").path("p99").isNumber(), traffic.toString());
    assertEquals(400, api.get("/v1/models/bad%20agent/traffic").status());
  }

  @Test
  void anUpstreamSlowerThanTheTimeoutIs504AndRecorded() throws Exception {
    String sessionId = "slow-" + UUID.randomUUID();
    Http.Response r = new Http(gateway.node.httpPort()).withToken(KEY_A).send("POST", "/v1/chat/completions",
        "{\"model\":\"default\",\"simulator_delay_ms\":8000,\"messages\":[{\"role\":\"user\",\"content\":\"slow\"}],"
            + "\"metadata\":{\"session_id\":\"" + sessionId + "\"}}");
    assertEquals(504, r.status(), r.body());
    assertEquals("upstream_timeout", r.json().path("error").path("code").asText());
    // the limit as the user set it, with its key (it read "within PT5S", Java's notation)
    assertTrue(r.json().path("error").path("message").asText().endsWith("did not answer within 5s (gateway.timeout)"),
        r.body());
    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 2);
    assertTrue(s.path("messages").get(1).path("inference").path("error").asText().contains("did not answer"));
  }

  @Test
  void aStreamedCallToAnUpstreamSlowerThanTheTimeoutIs504AndRecorded() throws Exception {
    // The simulator answered a streamed call at once whatever its simulator_delay_ms, so a slow
    // model's streamed calls were never slow in a test.
    String sessionId = "slow-stream-" + UUID.randomUUID();
    Http.Response r = new Http(gateway.node.httpPort()).withToken(KEY_A).send("POST", "/v1/chat/completions",
        "{\"model\":\"default\",\"stream\":true,\"simulator_delay_ms\":8000,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"slow\"}],"
            + "\"metadata\":{\"session_id\":\"" + sessionId + "\"}}");
    assertEquals(504, r.status(), r.body());
    assertEquals("upstream_timeout", r.json().path("error").path("code").asText());
    JsonNode s = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 2);
    assertTrue(s.path("messages").get(1).path("inference").path("error").asText().contains("did not answer"));
  }

  @Test
  void perTurnFeedbackNamesTheResponseByItsMsgId() throws Exception {
    HttpResponseFor<ChatCompletion> raw = client(KEY_A).chat().completions().withRawResponse().create(
        ChatCompletionCreateParams.builder().model("default").addUserMessage("rate this answer").build());
    String sessionId = raw.headers().values("X-Session-Id").get(0);
    String msgId = raw.parse().id();
    gateway.awaitSession(sessionId, n -> n.path("messages").size() == 2);
    Http.Response ok = api.post("/v1/sessions/" + sessionId + "/feedback",
        "{\"kind\":\"THUMBS_UP\",\"msgId\":\"" + msgId + "\"}");
    assertEquals(202, ok.status(), ok.body());
    Http.Response unknown = api.post("/v1/sessions/" + sessionId + "/feedback",
        "{\"kind\":\"THUMBS_DOWN\",\"msgId\":\"chatcmpl-nope\"}");
    assertEquals(404, unknown.status(), unknown.body());
    JsonNode feedback = gateway.awaitSession(sessionId, n -> true).path("feedback");
    assertEquals(1, feedback.size(), "the refused feedback changed nothing");
    assertEquals(msgId, feedback.get(0).path("msgId").asText());
  }

  @Test
  void aCallOverTheInFlightLimitIs429WithRetryAfter() throws Exception {
    long before = gateway.simulatorRequests();
    HttpClient http = HttpClient.newHttpClient();
    var slow = http.sendAsync(HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .header("Authorization", "Bearer " + KEY_A).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"default\",\"simulator_delay_ms\":2000,"
            + "\"messages\":[{\"role\":\"user\",\"content\":\"hold\"}]}")).build(),
        HttpResponse.BodyHandlers.ofString());
    for (int i = 0; i < 100 && gateway.simulatorRequests() == before; i++) Thread.sleep(50);
    assertEquals(before + 1, gateway.simulatorRequests(), "the first call is being answered");
    Http.Response second = new Http(gateway.node.httpPort()).withToken(KEY_A).post("/v1/chat/completions",
        "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"me too\"}]}");
    assertEquals(429, second.status(), second.body());
    assertEquals("rate_limit_exceeded", second.json().path("error").path("type").asText());
    assertTrue(second.headers().firstValue("Retry-After").isPresent());
    assertEquals(200, slow.get().statusCode());
  }

  @Test
  void theUpstreamsOwnRefusalIsPassedThroughAndNotRecorded() throws Exception {
    String sessionId = "refused-" + UUID.randomUUID();
    BadRequestException e = assertThrows(BadRequestException.class, () -> client(KEY_A).chat().completions().create(
        ChatCompletionCreateParams.builder().model("default").addUserMessage("twenty answers").n(20)
            .putAdditionalHeader("X-Session-Id", sessionId).build()));
    assertTrue(e.getMessage().contains("n must be"), e.getMessage());
    assertEquals(404, api.get("/v1/sessions/" + sessionId).status());
  }

  @Test
  void anAgentWithNoVersionToServeIs404ModelNotFoundAndNothingIsStored() {
    String sessionId = "nothing-" + UUID.randomUUID();
    com.openai.errors.NotFoundException e = assertThrows(com.openai.errors.NotFoundException.class,
        () -> client(KEY_D).chat().completions().create(ChatCompletionCreateParams.builder().model("default")
            .addUserMessage("anyone there?").putAdditionalHeader("X-Session-Id", sessionId).build()));
    assertEquals(404, e.statusCode());
    assertEquals("model_not_found", e.code().orElse(""));
    assertEquals(404, api.get("/v1/sessions/" + sessionId).status(), "nothing was stored");
  }

  @Test
  void anInvalidSessionIdIs400() {
    Http.Response r = new Http(gateway.node.httpPort()).withToken(KEY_A).post("/v1/chat/completions",
        "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
            + "\"metadata\":{\"session_id\":\"has spaces/and slashes\"}}");
    assertEquals(400, r.status(), r.body());
    assertEquals("metadata.session_id", r.json().path("error").path("param").asText());
    Http.Response masked = new Http(gateway.node.httpPort()).withToken(KEY_A).post("/v1/chat/completions",
        "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],"
            + "\"metadata\":{\"jane@example.com\":1}}");
    assertEquals(400, masked.status(), masked.body());
    assertEquals("metadata.*", masked.json().path("error").path("param").asText(), "a key is client data");
    assertFalse(masked.body().contains("jane"), masked.body());
  }

  @Test
  void theSimulatorsModelFaceSpeaksOpenAiToTheSdk() {
    OpenAIClient direct = OpenAIOkHttpClient.builder().apiKey("unused").baseUrl(simulator.baseUrl() + "/v1")
        .maxRetries(0).build();
    ChatCompletion two = direct.chat().completions().create(ChatCompletionCreateParams.builder()
        .model("served-name").addUserMessage("pick one").n(2).build());
    assertEquals(2, two.choices().size());
    assertEquals("served-name", two.model());
    assertTrue(two.choices().get(1).message().content().orElseThrow().endsWith("(choice 1)"));
    StringBuilder args = new StringBuilder();
    String[] name = {null};
    try (StreamResponse<ChatCompletionChunk> stream = direct.chat().completions().createStreaming(
        ChatCompletionCreateParams.builder().model("m").addUserMessage("call the tool please")
            .addTool(ChatCompletionFunctionTool.builder().function(FunctionDefinition.builder().name("lookup")
                .build()).build()).build())) {
      stream.stream().forEach(c -> c.choices().forEach(ch -> ch.delta().toolCalls().ifPresent(calls ->
          calls.forEach(tc -> {
            tc.function().flatMap(f -> f.name()).ifPresent(n -> name[0] = n);
            tc.function().flatMap(f -> f.arguments()).ifPresent(args::append);
          }))));
    }
    assertEquals("lookup", name[0]);
    assertEquals("{}", args.toString(), "a tool without parameters is called with no arguments");
  }

  /**
   * {@code n} = 2 streamed, as the Java SDK's own accumulator reads it: the simulator streamed choice 0
   * whole before choice 1, and {@code ChatCompletionAccumulator} threw "Already accumulated the final
   * chunk(s)" on choice 1's first chunk (trial t65); OpenAI and vLLM interleave the choices.
   */
  @Test
  void twoStreamedChoicesAccumulateInTheSdkAndChoiceZeroIsRecorded() throws Exception {
    OpenAIClient client = client(KEY_A);
    String sessionId = "n2-stream-" + UUID.randomUUID();
    ChatCompletionAccumulator accumulator = ChatCompletionAccumulator.create();
    try (StreamResponse<ChatCompletionChunk> stream = client.chat().completions().createStreaming(
        ChatCompletionCreateParams.builder().model("default").addUserMessage("Two answers please").n(2)
            .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build())
            .putAdditionalHeader("X-Session-Id", sessionId).build())) {
      stream.stream().forEach(accumulator::accumulate);
    }
    ChatCompletion whole = accumulator.chatCompletion();
    assertEquals(2, whole.choices().size());
    String first = whole.choices().get(0).message().content().orElseThrow();
    assertTrue(first.endsWith("Two answers please (choice 0)"), first);
    assertTrue(whole.choices().get(1).message().content().orElseThrow().endsWith("(choice 1)"));
    long completionTokens = whole.usage().orElseThrow().completionTokens();
    assertTrue(completionTokens > 0, "the usage chunk came after both choices");
    JsonNode reply = gateway.awaitSession(sessionId, n -> n.path("messages").size() == 2).path("messages").get(1);
    assertEquals(first, reply.path("content").asText(), "choice 0 is recorded");
    assertEquals(storedId(whole.id()), reply.path("msgId").asText());
    assertEquals(completionTokens, reply.path("inference").path("completionTokens").asLong());
    assertEquals("stop", reply.path("inference").path("finishReason").asText());
    assertTrue(reply.path("inference").path("aborted").isNull(), reply.toString());
  }

  /** A response id as the session stores it (the node's default rules are the built-in ones). */
  private static String storedId(String responseId) {
    return io.otl.core.session.Desensitizer.builtInScanner().applyToId(responseId);
  }
}
