package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.models.FunctionDefinition;
import com.openai.models.chat.completions.ChatCompletionAllowedToolChoice;
import com.openai.models.chat.completions.ChatCompletionAllowedTools;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionCustomTool;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import com.openai.models.chat.completions.ChatCompletionMessageToolCall;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A tool choice the model server must refuse is refused by the gateway, as OpenAI's 400 naming
 * {@code tool_choice}, nothing forwarded or stored: {@code "required"} with no tools was forwarded,
 * and the simulator (like a lenient server) answered as if no tool had been asked for, so the agent
 * got a plain answer where it had demanded a tool call. vLLM refuses it ("When using
 * `tool_choice`, `tools` must be set.") and so does OpenAI.
 */
class GatewayToolChoiceTest {
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String AGENT = "tool-chooser";
  private static final String WEATHER = "{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
      + "\"parameters\":{\"type\":\"object\",\"properties\":{}}}}";
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-tool-choice", Map.of()).serving(AGENT);
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "\"tool_choice\":\"required\"",
      "\"tool_choice\":\"auto\"",
      "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}}",
      "\"tool_choice\":\"required\",\"tools\":[]",
      "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_time\"}},\"tools\":[" + WEATHER + "]"})
  void aToolChoiceWithoutItsToolIsA400NothingForwardedOrStored(String fields) throws Exception {
    String session = "choice-" + UUID.randomUUID();
    long before = gateway.simulatorRequests();
    HttpResponse<String> r = call(session, fields);
    assertEquals(400, r.statusCode(), r.body());
    JsonNode error = new Http.Response(r.statusCode(), r.body(), r.headers()).json().path("error");
    assertEquals("tool_choice", error.path("param").asText(), r.body());
    assertEquals("invalid_request_error", error.path("type").asText(), r.body());
    assertTrue(error.path("message").asText().contains("tool"), r.body());
    assertEquals(before, gateway.simulatorRequests(), "nothing forwarded");
    assertEquals(404, gateway.api.get("/v1/sessions/" + session).status(), "nothing stored");
  }

  /**
   * A function tool whose {@code parameters} is not a JSON Schema object is refused naming it, nothing forwarded
   * or stored, as OpenAI and vLLM refuse it: the simulator answered, and the session kept {@code "x"} as the
   * tool's schema for the SFT export (trial t131).
   */
  @ParameterizedTest
  @ValueSource(strings = {"\"x\"", "1", "[]", "true"})
  void aToolWhoseParametersAreNoObjectIsA400NothingForwardedOrStored(String parameters) throws Exception {
    String session = "schema-" + UUID.randomUUID();
    long before = gateway.simulatorRequests();
    HttpResponse<String> r = call(session, "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
        + "\"parameters\":" + parameters + "}}]");
    assertEquals(400, r.statusCode(), r.body());
    JsonNode error = new Http.Response(r.statusCode(), r.body(), r.headers()).json().path("error");
    assertEquals("tools[0].function.parameters", error.path("param").asText(), r.body());
    assertEquals("invalid_request_error", error.path("type").asText(), r.body());
    assertEquals(before, gateway.simulatorRequests(), "nothing forwarded");
    assertEquals(404, gateway.api.get("/v1/sessions/" + session).status(), "nothing stored");
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "\"tool_choice\":\"none\"",
      "\"tool_choice\":\"auto\",\"tools\":[]",
      "\"tool_choice\":\"required\",\"tools\":[" + WEATHER + "]",
      "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}},\"tools\":[" + WEATHER + "]"})
  void aToolChoiceItsToolsAllowIsForwarded(String fields) throws Exception {
    String session = "choice-ok-" + UUID.randomUUID();
    HttpResponse<String> r = call(session, fields);
    assertEquals(200, r.statusCode(), r.body());
    // The turn is recorded after the answer: the request and the answer, once stored.
    Await.until("the turn of " + session + " recorded", Duration.ofSeconds(20),
        () -> gateway.api.get("/v1/sessions/" + session),
        s -> s.status() == 200 && s.json().path("messages").size() == 2);
  }

  /**
   * On the embedded default v0's server (the simulator) called a custom tool as a function named "" (the
   * SDK read a function call the agent could not dispatch), and called the first tool whatever an
   * {@code allowed_tools} choice listed (trial t79, the openai Python client). Now a custom tool's call is a
   * custom call with the user's text as its input, streamed too, and only a listed tool is called.
   */
  @Test
  void theSimulatorCallsACustomToolInItsShapeAndOnlyTheToolsAnAllowedToolsChoiceLists() throws Exception {
    OpenAIClient client = OpenAIOkHttpClient.builder().apiKey("unused").baseUrl(gateway.uri("/v1").toString())
        .putHeader("X-Agent-Id", AGENT).maxRetries(0).build();
    ChatCompletionCustomTool codeExec = ChatCompletionCustomTool.builder().custom(ChatCompletionCustomTool.Custom
        .builder().name("code_exec").build()).build();
    ChatCompletionFunctionTool weather = ChatCompletionFunctionTool.builder()
        .function(FunctionDefinition.builder().name("get_weather").build()).build();
    ChatCompletionCreateParams custom = ChatCompletionCreateParams.builder().model("default")
        .addUserMessage("run print(6 * 7) with code_exec").addTool(weather).addTool(codeExec)
        .putAdditionalBodyProperty("tool_choice", JsonValue.from(Map.of("type", "custom",
            "custom", Map.of("name", "code_exec"))))
        .build();
    ChatCompletionMessageToolCall call = client.chat().completions().create(custom).choices().get(0).message()
        .toolCalls().orElseThrow().get(0);
    assertTrue(call.isCustom(), call.toString());
    assertEquals("code_exec", call.asCustom().custom().name());
    assertEquals("run print(6 * 7) with code_exec", call.asCustom().custom().input());
    StringBuilder streamed = new StringBuilder();
    try (var stream = client.chat().completions().createStreaming(custom)) {
      stream.stream().forEach(streamed::append);
    }
    assertTrue(streamed.toString().contains("code_exec"), "the streamed call names its tool: " + streamed);

    ChatCompletionAllowedToolChoice onlyTime = ChatCompletionAllowedToolChoice.builder()
        .allowedTools(ChatCompletionAllowedTools.builder().mode(ChatCompletionAllowedTools.Mode.REQUIRED)
            .addTool(ChatCompletionAllowedTools.Tool.builder()
                .putAdditionalProperty("type", JsonValue.from("function"))
                .putAdditionalProperty("function", JsonValue.from(Map.of("name", "get_time"))).build())
            .build())
        .build();
    ChatCompletionCreateParams allowed = ChatCompletionCreateParams.builder().model("default")
        .addUserMessage("hello").addTool(weather)
        .addTool(ChatCompletionFunctionTool.builder().function(FunctionDefinition.builder().name("get_time").build())
            .build())
        .toolChoice(onlyTime).build();
    call = client.chat().completions().create(allowed).choices().get(0).message().toolCalls().orElseThrow().get(0);
    assertEquals("get_time", call.asFunction().function().name(), "the one tool allowed, its mode required");
  }

  /**
   * A forced choice binds after a tool's result too, as OpenAI and vLLM force it: the simulator called a tool
   * only when the user spoke last, so an agent that demands its final-answer tool after a result (trial t140,
   * the openai Python client with {@code tool_choice} {@code "required"} and a named function) got text, streamed
   * or not. Left to choose ({@code auto}), it still answers a result with text.
   */
  @ParameterizedTest
  @ValueSource(strings = {
      "\"tool_choice\":\"required\"",
      "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}}",
      "\"tool_choice\":\"required\",\"stream\":true",
      "\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}},\"stream\":true"})
  void aForcedToolChoiceAfterAToolResultIsAToolCall(String fields) throws Exception {
    // The user asks for the tool by name, so that only "the user spoke last" keeps auto from calling it again.
    String afterResult = "[{\"role\":\"user\",\"content\":\"use the tool get_weather\"},"
        + "{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\","
        + "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{}\"}}]},"
        + "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"sunny\"}]";
    HttpResponse<String> forced = call("forced-" + UUID.randomUUID(), afterResult, fields + ",\"tools\":[" + WEATHER + "]");
    assertEquals(200, forced.statusCode(), forced.body());
    assertTrue(forced.body().contains("\"tool_calls\"") && forced.body().contains("get_weather"),
        "the forced tool is called: " + forced.body());

    HttpResponse<String> auto = call("auto-" + UUID.randomUUID(), afterResult,
        "\"tool_choice\":\"auto\",\"tools\":[" + WEATHER + "]");
    assertEquals(200, auto.statusCode(), auto.body());
    assertTrue(!auto.body().contains("\"tool_calls\"") && auto.body().contains("\"stop\""),
        "left to choose, the model answers the result: " + auto.body());
  }

  /**
   * A parameter with an inline {@code enum} or {@code const} (a pydantic {@code Literal}, as
   * {@code openai.pydantic_function_tool} writes it) gets one of its values: the simulator gave a string
   * parameter the user's text whatever its enum, and the openai Python client's {@code parse()} raised a
   * ValidationError on the embedded default (trial t140).
   */
  @Test
  void theSimulatorCallsAToolWithAValueOfEachEnumParameter() throws Exception {
    String tool = "{\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"strict\":true,\"parameters\":"
        + "{\"type\":\"object\",\"properties\":{\"mode\":{\"type\":\"string\",\"enum\":[\"fast\",\"slow\"]},"
        + "\"days\":{\"type\":\"integer\",\"enum\":[3,7]},\"kind\":{\"const\":\"forecast\",\"type\":\"string\"},"
        + "\"city\":{\"type\":\"string\"}},\"required\":[\"mode\",\"days\",\"kind\",\"city\"]}}}";
    HttpResponse<String> r = call("enum-" + UUID.randomUUID(),
        "\"tool_choice\":\"required\",\"tools\":[" + tool + "]");
    assertEquals(200, r.statusCode(), r.body());
    JsonNode arguments = JSON.readTree(JSON.readTree(r.body()).path("choices").get(0).path("message").path("tool_calls").get(0)
        .path("function").path("arguments").asText());
    assertEquals("fast", arguments.path("mode").asText(), arguments.toString());
    assertEquals(3, arguments.path("days").asInt(), arguments.toString());
    assertEquals("forecast", arguments.path("kind").asText(), arguments.toString());
    assertEquals("what is the weather", arguments.path("city").asText(), "a free string is still the user's text");
  }

  private static HttpResponse<String> call(String session, String fields) throws Exception {
    return call(session, "[{\"role\":\"user\",\"content\":\"what is the weather\"}]", fields);
  }

  private static HttpResponse<String> call(String session, String messages, String fields) throws Exception {
    return CLIENT.send(HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .header("Content-Type", "application/json").header("X-Agent-Id", AGENT).header("X-Session-Id", session)
        .timeout(Duration.ofSeconds(60))
        .POST(HttpRequest.BodyPublishers.ofString("{\"model\":\"default\",\"messages\":" + messages + ","
            + fields + "}")).build(),
        HttpResponse.BodyHandlers.ofString());
  }
}
