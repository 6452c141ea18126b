package io.otl.http.gateway;

import io.otl.http.Json;
import io.otl.wire.Views;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;

/**
 * What an agent's OpenAI client reads besides chat completions: {@code GET /v1/models} and its
 * retrieve, and OpenAI's 404s for the resources the gateway does not serve, all in OpenAI's shapes.
 */
final class GatewayModels {
  private final GatewayIdentity identity;
  /** When the agent's model was created: its stable version's registration; empty for an agent with none yet. */
  private final Function<String, CompletionStage<Optional<Instant>>> createdAt;

  /**
   * @param createdAt the registration time of the agent's stable version, read without registering
   *     anything; empty when the agent has no version yet (its v0 is registered at its first call)
   */
  GatewayModels(GatewayIdentity identity, Function<String, CompletionStage<Optional<Instant>>> createdAt) {
    this.identity = identity;
    this.createdAt = createdAt;
  }

  /** The one model an agent sees: its requests' {@code model} is replaced by the routed version's anyway. */
  static final String LOGICAL_MODEL = "default";

  /** The owner the list shows to a client that names no agent. */
  static final String NO_AGENT_OWNER = "otl";

  /**
   * The list is the same for every agent, so a client that names none (no {@code X-Agent-Id} on a
   * node without gateway auth) gets it too, owned by {@link #NO_AGENT_OWNER}: it was a 400
   * {@code missing_agent}, so {@code client.models.list()}, what frameworks and UIs call first to check an
   * OpenAI-compatible server, failed (design §7.1: 200). Any other refusal (a wrong key: 401) stands.
   */
  CompletionStage<HttpResponse> list(HttpRequest request) {
    String agent;
    try {
      agent = identity.identify(request);
    } catch (OpenAiError e) {
      if (!"missing_agent".equals(e.code())) throw e;
      return CompletableFuture.completedFuture(listOf(modelObject(NO_AGENT_OWNER, Optional.empty())));
    }
    return modelObject(agent).thenApply(GatewayModels::listOf);
  }

  private static HttpResponse listOf(Map<String, Object> model) {
    return Json.ok(Views.map("object", "list", "data", List.of(model)));
  }

  /**
   * {@code GET /v1/models/default}, OpenAI's retrieve of the model {@link #list} lists: the
   * OpenAI SDKs' {@code models.retrieve("default")} got the design's {@code /v1/models/{agentId}}
   * answer instead (404, agent "default" unknown, not OpenAI's shape).
   */
  CompletionStage<HttpResponse> retrieve(HttpRequest request) {
    return modelObject(identity.identify(request)).thenApply(Json::ok);
  }

  /** Named back only when no built-in rule finds personal data in it: a path segment may hold anything. */
  private static String shownModel(String model) {
    if (!io.otl.core.session.Desensitizer.builtInScanner().findings(model).isEmpty()) return "this model";
    return "the model '" + (model.length() > 64 ? model.substring(0, 64) + "…" : model) + "'";
  }

  /**
   * {@code GET /v1/models/<other>} from an agent's OpenAI client ({@code models.retrieve("gpt-4o-mini")},
   * as frameworks check the model they were configured with): OpenAI's 404 {@code model_not_found}, in
   * OpenAI's error object. It was the design's {@code /v1/models/{agentId}} answer for an agent named
   * after the model, which the client could not parse ({@code code} null) and whose message named the
   * wrong thing. The caller's own agent id still reaches the design's view.
   */
  HttpResponse unknown(HttpRequest request, String model) {
    String agent = identity.identify(request);
    throw new OpenAiError(404, "invalid_request_error", "model", "model_not_found",
        shownModel(model) + " does not exist here: agent "
            + agent + " is served the model '" + LOGICAL_MODEL + "' (GET /v1/models); a chat completion may name"
            + " any model, the version routed for its session answers");
  }

  String agentOrNull(HttpRequest request) {
    try {
      return identity.identify(request);
    } catch (RuntimeException e) {
      return null;
    }
  }

  /**
   * OpenAI's {@code created} is when the model was created, in unix seconds: the registration of the version
   * that serves the agent (its stable), and for an agent with none yet now, as GET /v1/models/{agentId} shows
   * its v0 "as it will be registered". It was 0 (1970), which clients that sort or show models by it misread.
   */
  private CompletionStage<Map<String, Object>> modelObject(String agent) {
    return createdAt.apply(agent).thenApply(at -> modelObject(agent, at));
  }

  private static Map<String, Object> modelObject(String owner, Optional<Instant> created) {
    return Views.map("id", LOGICAL_MODEL, "object", "model",
        "created", created.orElseGet(Instant::now).getEpochSecond(), "owned_by", owner);
  }

  /**
   * OpenAI's other resources under {@code /v1}. An OpenAI client pointed at the node (responses,
   * legacy completions, embeddings …) got the API's 404 {@code {"error":"not_found"}}, which its
   * SDK cannot read as an error object (no type, no code) and whose message did not say that only
   * chat completions are served. None of these names is an API path.
   */
  static final java.util.regex.Pattern OPENAI_ELSEWHERE = java.util.regex.Pattern.compile(
      "completions|embeddings|responses|moderations|images|audio|files|uploads|batches|fine_tuning|assistants"
          + "|threads|vector_stores|realtime|conversations|containers|evals");

  static HttpResponse notServed(HttpRequest request, String name) {
    return new OpenAiError(404, "invalid_request_error", null, "unknown_url",
        "the inference gateway does not serve " + request.method().value() + " /v1/" + name
            + ": it serves POST /v1/chat/completions and GET /v1/models (docs/gateway.md)").response();
  }

  /**
   * OpenAI's paths without the {@code /v1} of its base URL: a client configured with
   * {@code baseUrl("http://node:8080")} got the API's 404 {@code {"error":"not_found"}}, which the
   * Java SDK reads as {@code NotFoundException: 404: null}, no code, no hint (trial t6). Only the
   * matched OpenAI name is named back.
   */
  static HttpResponse withoutV1(HttpRequest request, String name) {
    return new OpenAiError(404, "invalid_request_error", null, "unknown_url",
        request.method().value() + " /" + name + " is not a path of this node: OpenAI's base URL ends in /v1,"
            + " so point the client at http://<node>:<port>/v1 (POST /v1/chat/completions, GET /v1/models;"
            + " docs/gateway.md)").response();
  }

  /**
   * OpenAI's stored chat completions ({@code GET /v1/chat/completions}, {@code GET|POST|DELETE
   * /v1/chat/completions/{id}}, {@code GET …/{id}/messages}): the gateway stores none, so they are
   * URLs it does not serve, answered as OpenAI answers those (404 {@code unknown_url}). They were a
   * 405 or the API's 404, which an OpenAI client's {@code chat.completions.list()} or
   * {@code retrieve(id)} could not read. The id is not named back: a path segment may hold anything.
   */
  static HttpResponse storedCompletions(HttpRequest request, boolean withId) {
    return new OpenAiError(404, "invalid_request_error", null, "unknown_url",
        "the inference gateway does not serve " + request.method().value() + " /v1/chat/completions"
            + (withId ? "/{id}…" : "") + ": it stores no chat completions (OpenAI's stored completions); it serves"
            + " POST /v1/chat/completions and GET /v1/models (docs/gateway.md)").response();
  }
}
