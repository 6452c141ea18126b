package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
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
 * The gateway holds its bodies to the API's strict JSON (docs/http-edge.md): a new user's curl with
 * a NUL character was answered 200, and the NUL went as sent into the agent's SFT export; a second
 * object after the first, or a key sent twice, was recorded from one reading of a body the model
 * server may read another way. Each is OpenAI's 400, nothing forwarded, nothing stored.
 */
class GatewayStrictJsonTest {
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  private static final String AGENT = "strict-talker";
  private static GatewayTestNode gateway;

  @BeforeAll
  static void start() throws Exception {
    gateway = GatewayTestNode.start("gateway-strict", Map.of()).serving(AGENT);
  }

  @AfterAll
  static void stop() {
    if (gateway != null) gateway.close();
  }

  /**
   * An identity header sent twice with two values is OpenAI's 400 naming it, nothing forwarded or
   * stored: the gateway took the first, and recorded the call under an agent or session the client
   * may not have meant. The same value twice is one value.
   */
  @ParameterizedTest
  @ValueSource(strings = {"X-Agent-Id", "X-Session-Id"})
  void anIdentityHeaderSentTwiceWithTwoValuesIsA400(String header) throws Exception {
    String session = "twice-" + UUID.randomUUID();
    long before = gateway.simulatorRequests();
    HttpRequest.Builder b = HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .header("Content-Type", "application/json").timeout(Duration.ofSeconds(60))
        .POST(HttpRequest.BodyPublishers.ofString(
            "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"));
    if (header.equals("X-Agent-Id")) {
      b.header("X-Agent-Id", AGENT).header("X-Agent-Id", "other-agent").header("X-Session-Id", session);
    } else {
      b.header("X-Agent-Id", AGENT).header("X-Session-Id", session).header("X-Session-Id", session + "-b");
    }
    HttpResponse<String> r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(400, r.statusCode(), r.body());
    JsonNode error = new Http.Response(r.statusCode(), r.body(), r.headers()).json().path("error");
    assertEquals(header, error.path("param").asText(), r.body());
    assertEquals("invalid_value", error.path("code").asText(), r.body());
    assertEquals(before, gateway.simulatorRequests(), "nothing forwarded");
    assertEquals(404, gateway.api.get("/v1/sessions/" + session).status(), "nothing stored");

    HttpResponse<String> same = CLIENT.send(HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .header("Content-Type", "application/json").header("X-Agent-Id", AGENT).header("X-Agent-Id", AGENT)
        .header("X-Session-Id", session).timeout(Duration.ofSeconds(60))
        .POST(HttpRequest.BodyPublishers.ofString(
            "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, same.statusCode(), same.body());
  }

  @ParameterizedTest
  @ValueSource(strings = {
      "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\\u0000there\"}]}",
      "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\\ud800there\"}]}",
      "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]} {\"model\":\"x\"}",
      "{\"model\":\"default\",\"model\":\"other\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
      "{\"model\":\"default\",\"vendor_knob\":1e999,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
      // OpenAI refuses an empty tool_calls array ("too short"); it was stored as an empty assistant turn.
      "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
          + "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[]},{\"role\":\"user\",\"content\":\"and?\"}]}",
      "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"},"
          + "{\"role\":\"assistant\",\"content\":\"ok\",\"tool_calls\":[]},{\"role\":\"user\",\"content\":\"and?\"}]}",
      // A non-boolean include_usage was forwarded upstream as it was.
      "{\"model\":\"default\",\"stream\":true,\"stream_options\":{\"include_usage\":\"yes\"},"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
      // stream_options without stream: OpenAI and vLLM refuse it, the simulator (v0 by default) took it (trial t79).
      "{\"model\":\"default\",\"stream_options\":{\"include_usage\":true},"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
      // top_logprobs without logprobs: OpenAI and vLLM refuse it, the simulator answered it and a turn was stored.
      "{\"model\":\"default\",\"top_logprobs\":2,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
      "{\"model\":\"default\",\"logprobs\":false,\"top_logprobs\":2,"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
      "{\"model\":\"default\",\"logprobs\":true,\"top_logprobs\":-2,"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
      // read exactly: 2^64 wrapped to 0 and 0.5 was cut to 0, and both passed without logprobs (review t150)
      "{\"model\":\"default\",\"top_logprobs\":18446744073709551616,"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
      "{\"model\":\"default\",\"top_logprobs\":0.5,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
      "{\"model\":\"default\",\"logprobs\":true,\"top_logprobs\":-18446744073709551617,"
          + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"})
  void aBodyTheApiWouldRefuseIsOpenAis400AndNothingIsForwardedOrStored(String body) throws Exception {
    String session = "strict-" + UUID.randomUUID();
    long before = gateway.simulatorRequests();
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .header("Content-Type", "application/json").header("X-Agent-Id", AGENT).header("X-Session-Id", session)
        .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(400, r.statusCode(), r.body());
    JsonNode error = new Http.Response(r.statusCode(), r.body(), r.headers()).json().path("error");
    assertEquals("invalid_request_error", error.path("type").asText(), r.body());
    assertEquals("invalid_value", error.path("code").asText(), r.body());
    assertFalse(r.headers().firstValue("X-Session-Id").isPresent(), "a refused call names no session");
    assertEquals(before, gateway.simulatorRequests(), "nothing forwarded");
    assertEquals(404, gateway.api.get("/v1/sessions/" + session).status(), "nothing stored");
  }

  /**
   * OpenAI clients join {@code base_url} and the path as strings: a base URL copied with its
   * trailing slash sends {@code /v1//chat/completions}, which was the API's 404, not the gateway.
   */
  @ParameterizedTest
  @ValueSource(strings = {"/v1//chat/completions", "/v1/chat/completions/", "/v1//chat/completions/"})
  void aBaseUrlEndingInASlashStillReachesTheGateway(String path) throws Exception {
    String session = "slash-" + UUID.randomUUID();
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(gateway.uri(path))
        .header("Content-Type", "application/json").header("X-Agent-Id", AGENT).header("X-Session-Id", session)
        .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofString(
            "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    assertEquals("chat.completion", new Http.Response(r.statusCode(), r.body(), r.headers()).json()
        .path("object").asText(), r.body());
    assertEquals("v1", r.headers().firstValue("X-Model-Version").orElse(null));
    for (int i = 0; i < 100 && gateway.api.get("/v1/sessions/" + session).status() != 200; i++) Thread.sleep(100);
    assertEquals(200, gateway.api.get("/v1/sessions/" + session).status(), "the call is recorded in its session");

    HttpResponse<String> models = CLIENT.send(HttpRequest.newBuilder(gateway.uri(path.replace("chat/completions", "models")))
        .header("X-Agent-Id", AGENT).timeout(Duration.ofSeconds(60)).GET().build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, models.statusCode(), models.body());
    assertEquals("list", new Http.Response(models.statusCode(), models.body(), models.headers()).json()
        .path("object").asText(), models.body());
  }

  /**
   * A gzip body (some HTTP stacks compress requests) was read as JSON and refused as "not valid JSON",
   * which sent the client looking for a fault in its JSON. It is a 415 naming the encoding, in OpenAI's
   * shape, nothing forwarded or stored, as the API refuses encoded bodies.
   */
  @ParameterizedTest
  @ValueSource(strings = {"gzip", "br"})
  void anEncodedBodyIsA415NamingTheEncodingAndNothingIsForwarded(String encoding) throws Exception {
    String session = "encoded-" + UUID.randomUUID();
    long before = gateway.simulatorRequests();
    java.io.ByteArrayOutputStream gz = new java.io.ByteArrayOutputStream();
    try (var out = new java.util.zip.GZIPOutputStream(gz)) {
      out.write("{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"
          .getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .header("Content-Type", "application/json").header("Content-Encoding", encoding).header("X-Agent-Id", AGENT)
        .header("X-Session-Id", session).timeout(Duration.ofSeconds(60))
        .POST(HttpRequest.BodyPublishers.ofByteArray(gz.toByteArray())).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(415, r.statusCode(), r.body());
    JsonNode error = new Http.Response(r.statusCode(), r.body(), r.headers()).json().path("error");
    assertEquals("unsupported_media_type", error.path("code").asText(), r.body());
    assertEquals("Content-Encoding", error.path("param").asText(), r.body());
    assertTrue(error.path("message").asText().contains(encoding), r.body());
    assertEquals(before, gateway.simulatorRequests(), "nothing forwarded");
    assertEquals(404, gateway.api.get("/v1/sessions/" + session).status(), "nothing stored");
  }

  /**
   * A tool call's {@code arguments} (and the tool's answer) are JSON text the gateway parses for the
   * trajectory. Read leniently, {@code {"a":1,"a":2}} was stored as {@code {"a":2}}, {@code [1] junk}
   * as {@code [1]}, and {@code 1e999} or a NUL in a key reached the journal, which the events route
   * refuses. Such text is now stored as the text the model sent; strict JSON is still stored as JSON.
   */
  @ParameterizedTest
  @ValueSource(strings = {"{\"a\":1,\"a\":2}", "[1] junk", "{\"x\":1e999}", "{\"k\\u0000\":1}", "{\"x\":NaN}"})
  void toolArgumentsThatAreNotStorableJsonAreStoredAsText(String arguments) throws Exception {
    String session = "args-" + UUID.randomUUID();
    com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
    var body = json.createObjectNode().put("model", "default");
    var messages = body.putArray("messages");
    messages.addObject().put("role", "user").put("content", "add them");
    var call = messages.addObject().put("role", "assistant").putNull("content").putArray("tool_calls").addObject()
        .put("id", "call_1").put("type", "function");
    call.putObject("function").put("name", "calc").put("arguments", arguments);
    messages.addObject().put("role", "tool").put("tool_call_id", "call_1").put("content", "{\"sum\":3}");
    messages.addObject().put("role", "user").put("content", "and?");
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .header("Content-Type", "application/json").header("X-Agent-Id", AGENT).header("X-Session-Id", session)
        .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, r.statusCode(), r.body());
    JsonNode tool = com.fasterxml.jackson.databind.node.MissingNode.getInstance();
    for (int i = 0; i < 300 && tool.isMissingNode(); i++) { // the turn is recorded after the answer
      Http.Response stored = gateway.api.get("/v1/sessions/" + session);
      if (stored.status() == 200) tool = stored.json().path("toolCalls").path(0);
      if (tool.isMissingNode()) Thread.sleep(100);
    }
    assertTrue(tool.path("input").isTextual(), tool.toString());
    assertEquals(arguments, tool.path("input").asText());
    assertEquals(3, tool.path("output").path("sum").asInt(), "strict JSON is still stored as JSON: " + tool);
  }

  /**
   * OpenAI's model retrieve names the model back; a model id is a path segment and may be anything.
   * An e-mail address or phone number there was repeated in the 404; now it is "this model", and a
   * model name is still shown.
   */
  @ParameterizedTest
  @ValueSource(strings = {"jane.doe@example.com", "13812345678"})
  void anUnknownModelThatLooksLikePersonalDataIsNotRepeated(String model) throws Exception {
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(gateway.uri("/v1/models/" + model))
        .header("X-Agent-Id", AGENT).timeout(Duration.ofSeconds(60)).GET().build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(404, r.statusCode(), r.body());
    JsonNode error = new Http.Response(r.statusCode(), r.body(), r.headers()).json().path("error");
    assertEquals("model_not_found", error.path("code").asText(), r.body());
    assertFalse(r.body().contains(model), r.body());
    HttpResponse<String> named = CLIENT.send(HttpRequest.newBuilder(gateway.uri("/v1/models/gpt-4o-mini"))
        .header("X-Agent-Id", AGENT).timeout(Duration.ofSeconds(60)).GET().build(), HttpResponse.BodyHandlers.ofString());
    assertTrue(named.body().contains("'gpt-4o-mini'"), named.body());
  }

  /**
   * Overlong UTF-8 ({@code C0 AF} for '/') was decoded by Jackson, forwarded and stored as '/': the
   * body is malformed, so OpenAI's 400, nothing forwarded or stored.
   */
  @Test
  void overlongUtf8IsOpenAis400AndNothingIsForwardedOrStored() throws Exception {
    String session = "overlong-" + UUID.randomUUID();
    long before = gateway.simulatorRequests();
    java.io.ByteArrayOutputStream body = new java.io.ByteArrayOutputStream();
    body.writeBytes("{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"a"
        .getBytes(java.nio.charset.StandardCharsets.UTF_8));
    body.writeBytes(new byte[] {(byte) 0xC0, (byte) 0xAF});
    body.writeBytes("b\"}]}".getBytes(java.nio.charset.StandardCharsets.UTF_8));
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(gateway.uri("/v1/chat/completions"))
        .header("Content-Type", "application/json").header("X-Agent-Id", AGENT).header("X-Session-Id", session)
        .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray())).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(400, r.statusCode(), r.body());
    JsonNode error = new Http.Response(r.statusCode(), r.body(), r.headers()).json().path("error");
    assertEquals("invalid_value", error.path("code").asText(), r.body());
    assertTrue(error.path("message").asText().contains("invalid UTF-8"), r.body());
    assertEquals(before, gateway.simulatorRequests(), "nothing forwarded");
    assertEquals(404, gateway.api.get("/v1/sessions/" + session).status(), "nothing stored");
  }

  /**
   * OpenAI's other endpoints (an agent framework calling the Responses API, legacy completions or
   * embeddings through the same base URL) got the API's {@code {"error":"not_found"}}, which OpenAI's
   * SDKs cannot read as an error object: now OpenAI's 404 saying what the gateway serves.
   */
  @ParameterizedTest
  @ValueSource(strings = {"POST /v1/responses", "POST /v1/completions", "POST /v1/embeddings", "GET /v1/files/f-1"})
  void openAisOtherEndpointsAreA404InOpenAisShape(String call) throws Exception {
    String[] mp = call.split(" ");
    HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(gateway.uri(mp[1]))
        .header("Content-Type", "application/json").header("X-Agent-Id", AGENT).timeout(Duration.ofSeconds(60))
        .method(mp[0], mp[0].equals("GET") ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString("{\"model\":\"default\",\"input\":\"hi\"}")).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(404, r.statusCode(), r.body());
    JsonNode error = new Http.Response(r.statusCode(), r.body(), r.headers()).json().path("error");
    assertEquals("invalid_request_error", error.path("type").asText(), r.body());
    assertEquals("unknown_url", error.path("code").asText(), r.body());
    assertTrue(error.path("message").asText().contains("POST /v1/chat/completions"), r.body());
  }
}
