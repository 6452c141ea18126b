package io.otl.http.gateway;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.model.ModelProtocol.RouteDecision;
import io.otl.http.Json;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.stream.Materializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What reaches the model server: the URL, the body (served model name), the upstream key. */
class UpstreamTest {
  private static ActorTestKit kit;
  private static ServerBinding server;
  private static final AtomicReference<HttpRequest> lastRequest = new AtomicReference<>();
  private static final AtomicReference<byte[]> lastBody = new AtomicReference<>();

  @BeforeAll
  static void start() throws Exception {
    kit = ActorTestKit.create("upstream-test");
    Materializer mat = Materializer.matFromSystem(kit.system());
    org.apache.pekko.japi.function.Function<HttpRequest, java.util.concurrent.CompletionStage<HttpResponse>> echo =
        request -> request.entity().toStrict(3000, mat).thenApply(strict -> {
          lastRequest.set(request);
          lastBody.set(strict.getData().toArray());
          return HttpResponse.create().withEntity(ContentTypes.APPLICATION_JSON, "{}");
        });
    server = Http.get(kit.system()).newServerAt("127.0.0.1", 0).bind(echo)
        .toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  @AfterAll
  static void stop() {
    server.unbind();
    kit.shutdownTestKit();
  }

  private static String base() {
    return "http://127.0.0.1:" + server.localAddress().getPort();
  }

  private static ChatRequest request(String json) {
    return ChatRequest.parse(json.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void theAgentsBytesGoOutUnchangedWhenNoServedModelIsNamed() throws Exception {
    String json = "{\"model\":\"default\",  \"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"top_k\":1e-5}";
    Upstream up = new Upstream(kit.system(), Duration.ofSeconds(5));
    HttpResponse r = up.send(new RouteDecision("a", "s", "v1", base() + "/v1", null), request(json), "", Duration.ofSeconds(5))
        .toCompletableFuture().get(10, TimeUnit.SECONDS);
    r.discardEntityBytes(kit.system());
    assertEquals("/v1/chat/completions", lastRequest.get().getUri().path());
    assertArrayEquals(json.getBytes(StandardCharsets.UTF_8), lastBody.get());
    assertEquals(true, lastRequest.get().getHeader("Authorization").isEmpty(), "no key configured, none sent");
  }

  @Test
  void theServedModelReplacesTheModelAndTheUpstreamKeyIsSent() throws Exception {
    String json = "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"vendor_x\":{\"a\":1}}";
    Upstream up = new Upstream(kit.system(), Duration.ofSeconds(5));
    up.send(new RouteDecision("a", "s", "v2", base() + "/v1/", "agent-a-v2"), request(json), "up-key", Duration.ofSeconds(5))
        .toCompletableFuture().get(10, TimeUnit.SECONDS).discardEntityBytes(kit.system());
    JsonNode sent = Json.MAPPER.readTree(lastBody.get());
    assertEquals("agent-a-v2", sent.path("model").asText());
    assertEquals(1, sent.path("vendor_x").path("a").asInt(), "unknown fields pass through");
    assertEquals("Bearer up-key", lastRequest.get().getHeader("Authorization").get().value());
  }

  @Test
  void endpointsAreOpenAiBaseUrls() {
    assertEquals("http://h:8000/v1/chat/completions", Upstream.chatUrl(decision("http://h:8000/v1")));
    assertEquals("http://h:8000/v1/chat/completions", Upstream.chatUrl(decision("http://h:8000")));
    assertEquals("https://h/x/chat/completions", Upstream.chatUrl(decision("https://h/x/chat/completions")));
    assertThrows(OpenAiError.class, () -> Upstream.chatUrl(decision("file:///models/v1/huggingface")));
  }

  /**
   * A version registered before registration checked the port (http://127.0.0.1:99999/v1) made
   * pekko's client throw on every call, which the gateway answered 500: it is an unusable endpoint,
   * the 502 of any other, and the fallback to the stable applies.
   */
  @Test
  void anEndpointThePekkoClientRefusesIsAnUpstreamFailure() {
    for (String endpoint : java.util.List.of("http://127.0.0.1:99999/v1", "http://vllm:65536/v1")) {
      OpenAiError e = assertThrows(OpenAiError.class, () -> Upstream.chatUrl(decision(endpoint)));
      assertEquals(502, e.status(), endpoint);
    }
  }

  /** Registration takes HTTP:// (a scheme is case-insensitive); the gateway called it "no HTTP endpoint". */
  @Test
  void anUpperCaseSchemeIsCalled() throws Exception {
    Upstream up = new Upstream(kit.system(), Duration.ofSeconds(5));
    String json = "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    HttpResponse r = up.send(decision(base().replace("http://", "HTTP://") + "/v1"), request(json), "", Duration.ofSeconds(5))
        .toCompletableFuture().get(10, TimeUnit.SECONDS);
    r.discardEntityBytes(kit.system());
    assertEquals(200, r.status().intValue());
    assertEquals("/v1/chat/completions", lastRequest.get().getUri().path());
  }

  /**
   * An endpoint's chat URL is checked and parsed once (it was parsed five times per call: checked when the call
   * was attempted and when it was sent, then parsed into the request): the same target every time, the URL as
   * {@link Upstream#chatUrl} gives it, and an endpoint that is not callable refused every time, not remembered.
   */
  @Test
  void anEndpointsTargetIsParsedOnceAndAnUncallableOneIsRefusedEveryTime() {
    for (String endpoint : java.util.List.of("http://h:8000/v1", "http://h:8000", " https://h/x/chat/completions ")) {
      Upstream.Target first = Upstream.target(decision(endpoint));
      assertEquals(Upstream.chatUrl(decision(endpoint)), first.url(), endpoint);
      assertEquals(first.url(), first.uri().toString(), endpoint);
      org.junit.jupiter.api.Assertions.assertSame(first, Upstream.target(decision(endpoint)), endpoint);
    }
    for (int i = 0; i < 2; i++) {
      OpenAiError e = assertThrows(OpenAiError.class, () -> Upstream.target(decision("file:///models/v1/huggingface")));
      assertEquals(502, e.status());
    }
  }

  /**
   * The served model name and the removal of {@code metadata.session_id} change the copy that goes out, never
   * the agent's request, which the turn's recording reads after the answer: fields in the agent's order, the
   * messages as sent, the agent's own metadata keys kept.
   */
  @Test
  void aServedModelAndTheSessionIdChangeOnlyTheForwardedCopy() throws Exception {
    String json = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"model\":\"default\","
        + "\"metadata\":{\"session_id\":\"s-1\",\"team\":\"red\"},\"top_p\":0.5}";
    ChatRequest request = request(json);
    com.fasterxml.jackson.databind.node.ObjectNode before = request.body().deepCopy();
    Upstream up = new Upstream(kit.system(), Duration.ofSeconds(5));
    up.send(new RouteDecision("a", "s-1", "v2", base() + "/v1", "agent-a-v2"), request, "", Duration.ofSeconds(5))
        .toCompletableFuture().get(10, TimeUnit.SECONDS).discardEntityBytes(kit.system());
    assertEquals("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"model\":\"agent-a-v2\","
        + "\"metadata\":{\"team\":\"red\"},\"top_p\":0.5}", new String(lastBody.get(), StandardCharsets.UTF_8));
    assertEquals(before, request.body(), "the agent's request is unchanged");
    org.junit.jupiter.api.Assertions.assertSame(request.messages(), request.body().get("messages"));
    assertEquals("s-1", request.body().path("metadata").path("session_id").asText());
    // metadata with the session id alone goes as a whole
    String only = "{\"model\":\"default\",\"metadata\":{\"session_id\":\"s-2\"},\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";
    ChatRequest second = request(only);
    up.send(new RouteDecision("a", "s-2", "v2", base() + "/v1", null), second, "", Duration.ofSeconds(5))
        .toCompletableFuture().get(10, TimeUnit.SECONDS).discardEntityBytes(kit.system());
    assertEquals("{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}",
        new String(lastBody.get(), StandardCharsets.UTF_8));
    assertEquals("s-2", second.body().path("metadata").path("session_id").asText());
  }

  private static RouteDecision decision(String endpoint) {
    return new RouteDecision("a", "s", "v1", endpoint, null);
  }
}
