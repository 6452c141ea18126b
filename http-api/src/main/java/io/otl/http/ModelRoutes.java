package io.otl.http;

import static io.otl.http.RequestBodies.body;
import static io.otl.http.RequestBodies.noBody;
import static io.otl.http.RequestBodies.onlyFields;
import static io.otl.http.RequestBodies.readJson;
import static io.otl.http.SessionRoutes.guard;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathEndOrSingleSlash;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.post;
import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.Ids;
import io.otl.core.model.ModelVersion;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCode;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.util.ByteString;

/** {@code /v1/models/{agentId}…}: versions, manual transitions and routing (design §7.1). */
public final class ModelRoutes {
  private static final int MAX_TEXT = 2048;
  private final ClusterSharding sharding;
  private final Duration askTimeout;
  private final io.otl.core.api.AgentDirectory directory;
  /** The base model every agent starts with as v0 (design §3.3); empty when none is configured. */
  private final Optional<io.otl.core.serving.BaseModel> baseModel;
  private final io.otl.core.session.Desensitizer desensitizer;
  /** Where a session's start version is read, so the route read answers what the gateway serves; null: none. */
  private final io.otl.core.api.SessionOwners owners;
  /** Whether an endpoint is this node's own HTTP listener, where the gateway would call itself. */
  private final java.util.function.Predicate<String> ownListener;

  /**
   * @param baseModel the configured v0, answered as the route of an agent without versions
   * @param desensitizer the sessions' own: a rollback's reason is free text a client writes into the
   *     journal, so PII in it is replaced as in every session text (design §3.1: raw PII never reaches
   *     the journal)
   * @param owners reads the version a session started on, which it keeps while that version serves
   *     (design §3.3); null routes every session by its bucket alone
   * @param ownListener whether an endpoint is this node's own HTTP listener
   *     ({@link io.otl.http.gateway.ServingUrls#reachesListener}): such a registration is refused
   */
  public ModelRoutes(ClusterSharding sharding, Duration askTimeout, io.otl.core.api.AgentDirectory directory,
      Optional<io.otl.core.serving.BaseModel> baseModel, io.otl.core.session.Desensitizer desensitizer,
      io.otl.core.api.SessionOwners owners, java.util.function.Predicate<String> ownListener) {
    this.ownListener = java.util.Objects.requireNonNull(ownListener, "ownListener");
    this.sharding = sharding;
    this.askTimeout = askTimeout;
    this.directory = directory;
    this.baseModel = baseModel;
    this.desensitizer = java.util.Objects.requireNonNull(desensitizer, "desensitizer");
    this.owners = owners;
  }

  /** Whether the agent's ModelVersion entity was ever written, asked without starting it. */
  private CompletionStage<Boolean> hasVersions(String agentId) {
    return directory.exists(ModelVersion.ENTITY_TYPE_KEY.name() + "|" + agentId);
  }

  /** Runs {@code then} when the agent has model versions; 404 otherwise, starting no entity. */
  private CompletionStage<HttpResponse> known(String agentId, java.util.function.Supplier<CompletionStage<HttpResponse>> then) {
    return hasVersions(agentId).thenCompose(exists -> exists
        ? then.get()
        : java.util.concurrent.CompletableFuture.completedFuture(
            Json.error(StatusCodes.NOT_FOUND, "not_found", "agent " + Ids.shown(agentId) + " has no model versions")));
  }

  public Route route() {
    return pathPrefix("models", () -> pathPrefix(segment(), agentId -> concat(
        pathEndOrSingleSlash(() -> get(() -> completeWithFuture(guard(() -> models(agentId))))),
        path("route", () -> get(() -> QueryParams.only(java.util.List.of("sessionId"), query ->
            completeWithFuture(guard(() -> route(agentId, query.sent("sessionId"))))))),
        pathPrefix("versions", () -> concat(
            pathEndOrSingleSlash(() -> post(() -> Actors.actor(actor -> body(b ->
                completeWithFuture(guard(() -> register(agentId, b, actor))))))),
            pathPrefix(segment(), version -> concat(
                transition("promote", agentId, version, (v, b, actor) -> {
                  noBody(b, "a promote takes no body (a reason is for rollback)");
                  return reply -> new ModelVersion.Promote(v, actor, reply);
                }),
                transition("rollback", agentId, version,
                    (v, b, actor) -> reply -> new ModelVersion.Rollback(v, reason(b), actor, reply)),
                transition("pause", agentId, version, (v, b, actor) -> {
                  noBody(b, "a pause takes no body");
                  return reply -> new ModelVersion.Pause(v, actor, reply);
                }),
                transition("resume", agentId, version, (v, b, actor) -> {
                  noBody(b, "a resume takes no body");
                  return reply -> new ModelVersion.Resume(v, actor, reply);
                }))))))));
  }

  /** An operator's command: (version, body, actor) → the command to send. */
  private interface TransitionCommand {
    java.util.function.Function<ActorRef<ModelVersion.TransitionReply>, ModelVersion.Command> of(
        String version, ByteString body, String actor);
  }

  private Route transition(String name, String agentId, String version, TransitionCommand command) {
    return path(name, () -> post(() -> Actors.actor(actor -> body(b ->
        completeWithFuture(guard(() -> {
          checkAgent(agentId);
          checkVersion(version);
          var cmd = command.of(version, b, actor);
          return hasVersions(agentId).thenCompose(exists -> exists
              ? ask(agentId, cmd).thenApply(r -> transitionResponse(r, StatusCodes.ACCEPTED))
              : java.util.concurrent.CompletableFuture.completedFuture(noVersionsYet(agentId, version, name)));
        }))))));
  }

  /**
   * A transition asked of an agent with no version written yet, starting no entity (a refused request
   * writes nothing). With a base model configured the agent has v0 STABLE, as its models read shows:
   * "has no model versions" contradicted that read (trial t56).
   */
  private HttpResponse noVersionsYet(String agentId, String version, String transition) {
    if (baseModel.isEmpty()) {
      return Json.error(StatusCodes.NOT_FOUND, "not_found", "agent " + Ids.shown(agentId) + " has no model versions");
    }
    String base = io.otl.core.serving.BaseModel.VERSION;
    if (!version.equals(base)) {
      return Json.error(StatusCodes.NOT_FOUND, "not_found", "agent " + Ids.shown(agentId) + " has no version " + version
          + ": its only version is " + base + ", the base model, STABLE");
    }
    // The path's "rollback" is the verb "roll back" in prose, as the entity's own refusals spell it: an
    // operator saw "cannot rollback v0" beside "cannot roll back v0" for the same request (trial t103).
    String verb = transition.equals("rollback") ? "roll back" : transition;
    return Json.error(StatusCodes.CONFLICT, "invalid_transition", "cannot " + verb + " " + base + ": it is "
        + "the base model, STABLE, and the agent has no other version"
        + (transition.equals("rollback") ? " (no previous stable to return to)" : ""));
  }

  /**
   * The optional {@code {"reason": "..."}} body of a rollback, desensitized; null when there is none
   * (the entity then records "manual rollback": a default here made it "manual rollback: manual
   * rollback").
   */
  private String reason(ByteString bytes) {
    if (bytes.isEmpty()) return null;
    JsonNode body = readJson(bytes);
    onlyFields(body, Set.of("reason"));
    String reason = EventParser.text(body, "body", "reason");
    if (reason != null && reason.length() > MAX_TEXT) {
      throw BadRequest.invalid("reason is longer than " + MAX_TEXT + " characters");
    }
    return reason == null || reason.isBlank() ? null : desensitizer.apply(reason);
  }

  private CompletionStage<HttpResponse> models(String agentId) {
    checkAgent(agentId);
    if (baseModel.isPresent()) {
      // As the route read: an agent with no version yet has v0 STABLE (design §3.3), shown from the
      // configuration without starting its entity; a read writes nothing.
      return hasVersions(agentId).thenCompose(exists -> exists
          ? askModels(agentId)
          : java.util.concurrent.CompletableFuture.completedFuture(
              Json.ok(ModelVersion.baseModelView(agentId, baseModel.get(), java.time.Instant.now()))));
    }
    return known(agentId, () -> askModels(agentId));
  }

  private CompletionStage<HttpResponse> askModels(String agentId) {
    return sharding.entityRefFor(ModelVersion.ENTITY_TYPE_KEY, agentId)
        .<ModelVersion.ModelsView>ask(ModelVersion.Get::new, askTimeout)
        .thenApply(view -> view.versions().isEmpty()
            ? Json.error(StatusCodes.NOT_FOUND, "not_found", "agent " + Ids.shown(agentId) + " has no model versions")
            : Json.ok(view));
  }

  private CompletionStage<HttpResponse> route(String agentId, Optional<String> sessionId) {
    checkAgent(agentId);
    String s = sessionId.orElseThrow(() -> BadRequest.invalid("the query parameter sessionId is required"));
    SessionRoutes.checkSessionId(s);
    return hasVersions(agentId).thenCompose(exists -> {
      if (!exists && baseModel.isPresent()) {
        // An agent with no version yet is served by v0, the configured base model, as the gateway and
        // the Java ModelRouter (which register v0 on first use) would serve it. Answered from the
        // configuration: a read writes nothing, and v0 is registered with these very values later.
        io.otl.core.serving.BaseModel b = baseModel.get();
        return java.util.concurrent.CompletableFuture.completedFuture(
            routeJson(agentId, s, io.otl.core.serving.BaseModel.VERSION, b.endpoint(), b.model()));
      }
      return known(agentId, () -> startedOn(agentId, s).thenCompose(pin -> sharding
          .entityRefFor(ModelVersion.ENTITY_TYPE_KEY, agentId)
          .<ModelVersion.RouteReply>ask(reply -> new ModelVersion.Route(s, pin, reply), askTimeout))
          .thenApply(r -> r instanceof ModelVersion.RouteDecision d
              ? routeJson(d.agentId(), d.sessionId(), d.version(), d.endpoint(), d.servedModel())
              : failure((ModelVersion.Failure) r)));
    });
  }

  /** The version the agent's session started on; null when it has not started, or no reader. */
  private CompletionStage<String> startedOn(String agentId, String sessionId) {
    if (owners == null) return java.util.concurrent.CompletableFuture.completedFuture(null);
    return owners.ownerOf(sessionId).thenApply(o -> o.filter(x -> x.agentId().equals(agentId))
        .map(io.otl.core.api.SessionOwners.Owner::modelVersion).orElse(null));
  }

  static HttpResponse routeJson(String agentId, String sessionId, String version, String endpoint,
      String servedModel) {
    // An ordered map: Map.of's order changes with each JVM, so the same route read differently after a restart.
    Map<String, Object> body = new java.util.LinkedHashMap<>();
    body.put("agentId", agentId);
    body.put("sessionId", sessionId);
    body.put("version", version);
    body.put("endpoint", endpoint == null ? "" : endpoint);
    // null when the version names no served model (the gateway sends the agent's own model name), as the
    // version's deployment.servedModel in GET /v1/models/{agentId}; it was "" here, a name no server has.
    body.put("servedModel", servedModel == null || servedModel.isBlank() ? null : servedModel);
    return Json.ok(body);
  }

  private CompletionStage<HttpResponse> register(String agentId, ByteString bytes, String actor) {
    checkAgent(agentId);
    JsonNode body = readJson(bytes);
    onlyFields(body, Set.of("version", "artifact", "endpoint", "servedModel"));
    String version = EventParser.text(body, "body", "version");
    String artifact = EventParser.text(body, "body", "artifact");
    String endpoint = EventParser.text(body, "body", "endpoint");
    String servedModel = EventParser.text(body, "body", "servedModel");
    checkVersion(version);
    if (artifact == null || artifact.isBlank()) throw BadRequest.invalid("artifact is required (a model URI or path)");
    if (artifact.length() > MAX_TEXT) throw BadRequest.invalid("artifact is longer than " + MAX_TEXT + " characters");
    if (Ids.hasControlCharacter(artifact)) {
      throw BadRequest.invalid("artifact must not contain control characters (newline, tab …): it is logged and "
          + "handed to the serving backend as written");
    }
    if (endpoint == null || endpoint.isBlank()) {
      throw BadRequest.invalid("endpoint is required (the inference URL that serves this version)");
    }
    if (endpoint.length() > MAX_TEXT) throw BadRequest.invalid("endpoint is longer than " + MAX_TEXT + " characters");
    if (!io.otl.http.gateway.ServingUrls.callable(endpoint)) {
      // Not echoed: an endpoint may carry credentials (http://user:key@host).
      throw BadRequest.invalid("endpoint is not an absolute http(s) URL with a host and, if it gives a port, a "
          + "port from 1 to 65535; give the inference URL that serves this version (OpenAI-compatible base URL)");
    }
    if (io.otl.http.gateway.ServingUrls.hasCredentials(endpoint)) {
      throw BadRequest.invalid("endpoint must not carry credentials (user:password@…): the gateway does not send "
          + "them, and the endpoint is stored and shown by GET /v1/models and …/route; give the server's key as "
          + "gateway.upstream-api-key (or gateway.agents.<agentId>.upstream-api-key)");
    }
    if (io.otl.http.gateway.ServingUrls.hasQueryOrFragment(endpoint)) {
      // Not echoed: the query is where a key would be.
      throw BadRequest.invalid("endpoint must not have a query or fragment (?…, #…): the gateway appends "
          + "/chat/completions to it, so every call would miss the server, and the endpoint is stored and shown by "
          + "GET /v1/models and …/route; give the server's key as gateway.upstream-api-key (or "
          + "gateway.agents.<agentId>.upstream-api-key)");
    }
    if (ownListener.test(endpoint)) {
      // Every call of the version would re-enter this gateway (trial t121: answered 400 missing_agent, passed
      // to the agent, counted against nothing). Another name of this node is refused when called (GatewayHop).
      throw BadRequest.invalid("endpoint points at this node's own HTTP listener (http.host and port), so the "
          + "gateway would call itself; register the URL of the model server that serves this version (the "
          + "OpenAI-compatible base URL of vLLM, OpenAI …), never an OTL node's /v1");
    }
    if (servedModel != null && (servedModel.isEmpty() || servedModel.length() > 256
        || !servedModel.codePoints().allMatch(ch -> ch > 0x20 && ch != 0x7f && !Character.isWhitespace(ch)
            && !Character.isISOControl(ch)))) {
      throw BadRequest.invalid("servedModel must be 1 to 256 characters without spaces or control characters "
          + "(the model name the gateway sends to endpoint for this version), or absent");
    }
    // All are journaled as sent (the version-registered event): the policy's rule, value not echoed.
    try {
      // The version too: the id rule refuses phone, ID and card numbers and e-mails but not keys, and a
      // version is logged at every transition ("model version sk-proj-… CANARY"), not only journaled.
      io.otl.core.session.Desensitizer.refusePersonalData("version", version,
          "a version names weights (v2, 1.2.0+lora) and is logged and journaled as sent");
      io.otl.core.session.Desensitizer.refusePersonalData("artifact", artifact, "an artifact names a model URI or path");
      io.otl.core.session.Desensitizer.refusePersonalData("endpoint", endpoint,
          "an endpoint is the inference URL that serves this version");
      if (servedModel != null) {
        io.otl.core.session.Desensitizer.refusePersonalData("servedModel", servedModel,
            "a served model name is the model name the endpoint serves");
      }
    } catch (IllegalArgumentException e) {
      throw BadRequest.invalid(e.getMessage());
    }
    java.util.function.Supplier<CompletionStage<HttpResponse>> registered = () -> ask(agentId,
        reply -> new ModelVersion.RegisterManual(version, artifact, endpoint, servedModel, actor, reply))
        .thenApply(r -> transitionResponse(r, StatusCodes.CREATED));
    boolean keyInId = io.otl.core.session.PiiRules.keyInId(agentId);
    boolean baseVersion = baseModel.isPresent() && version.equals(io.otl.core.serving.BaseModel.VERSION);
    if (!keyInId && !baseVersion) return registered.get();
    return hasVersions(agentId).thenCompose(exists -> {
      if (exists) return registered.get();
      // An agent's first version registers the agent: not under an id holding a key (trial t159), refused
      // before its entity starts (sharding journals the ids it starts); one an earlier build has keeps its routes.
      if (keyInId) {
        return java.util.concurrent.CompletableFuture.completedFuture(
            Json.error(StatusCodes.BAD_REQUEST, "invalid_request", Ids.keyProblem("agentId", agentId)));
      }
      // v0 is the configured base model, STABLE from the agent's start (design §3.3): the entity refuses it
      // as existing, but only after writing it, so the 409 journaled v0 (trial t169). Refused here as the
      // entity words it, starting nothing, as the transitions of v0 are (noVersionsYet).
      return java.util.concurrent.CompletableFuture.completedFuture(Json.error(StatusCodes.CONFLICT, "conflict",
          "version " + io.otl.core.serving.BaseModel.VERSION + " already exists (it is STABLE)"));
    });
  }

  private CompletionStage<ModelVersion.TransitionReply> ask(
      String agentId, java.util.function.Function<ActorRef<ModelVersion.TransitionReply>, ModelVersion.Command> cmd) {
    return sharding.entityRefFor(ModelVersion.ENTITY_TYPE_KEY, agentId).ask(cmd::apply, askTimeout);
  }

  private static HttpResponse transitionResponse(ModelVersion.TransitionReply reply, StatusCode success) {
    if (reply instanceof ModelVersion.VersionStatus s) return Json.response(success, s);
    return failure((ModelVersion.Failure) reply);
  }

  private static HttpResponse failure(ModelVersion.Failure f) {
    return Json.rejected(f);
  }

  static void checkAgent(String agentId) {
    String p = Ids.problem("agentId", agentId, Ids.MAX_AGENT_ID);
    if (p != null) throw BadRequest.invalid(p);
  }

  static void checkVersion(String version) {
    String p = Ids.versionProblem("version", version);
    if (p != null) throw BadRequest.invalid(p);
  }
}
