package io.otl.http.otlp;

import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.entity;
import static org.apache.pekko.http.javadsl.server.Directives.extractRequest;
import static org.apache.pekko.http.javadsl.server.Directives.handleExceptions;
import static org.apache.pekko.http.javadsl.server.Directives.handleRejections;
import static org.apache.pekko.http.javadsl.server.Directives.mapResponse;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.post;

import io.otl.core.api.DataCollector;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionInput;
import io.otl.http.ApiErrors;
import io.otl.http.ApiMetrics;
import io.otl.http.Auth;
import io.otl.http.BadRequest;
import io.otl.http.ContentEncoding;
import io.otl.http.Json;
import io.otl.http.MetricsRegistry;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.http.javadsl.model.ContentType;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;
import org.apache.pekko.util.ByteString;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * OTLP/HTTP traces receiver, {@code POST /v1/traces} (design §7.6): protobuf or JSON, optionally
 * gzip, answered as the OTLP specification says (200 with an ExportTraceServiceResponse in the
 * request's encoding, {@code partial_success} naming refused spans; 400 for an undecodable body,
 * 415 for another content type). The mapped inputs go through {@link DataCollector}, so each
 * session validates, desensitizes and deduplicates them as it does for the events route.
 */
public final class OtlpRoutes {
  private static final Logger log = LoggerFactory.getLogger(OtlpRoutes.class);
  static final ContentType.Binary PROTOBUF = ContentTypes.create(MediaTypes.applicationBinary("x-protobuf", false));

  private final DataCollector collector;
  private final ApiMetrics metrics;
  private final int maxEventsPerWrite;
  private final long maxDecodedBytes;
  private final io.otl.core.session.Desensitizer desensitizer;
  private final io.otl.http.gateway.TextCut cut;
  /**
   * A session's requests with chat spans are placed and written one after the other on this node: each chat
   * span is placed against what the session holds ({@link ConversationAlignment}), so two requests of one
   * session must not both place theirs against what it held before either was written.
   */
  private final io.otl.http.InTurn inTurn = new io.otl.http.InTurn();

  /**
   * @param maxEventsPerWrite a session's inputs are written in chunks of at most this many
   * @param maxDecodedBytes limit of a body, raw or once decompressed from gzip
   * @param desensitizer the sessions' own, for ids made of message texts
   * @param maxTextLength the sessions' {@code data-collector.max-text-length}: longer texts and tool
   *     inputs/outputs are stored cut, marked {@code truncated}, as the gateway stores them
   */
  public OtlpRoutes(DataCollector collector, ApiMetrics metrics, int maxEventsPerWrite, long maxDecodedBytes,
      io.otl.core.session.Desensitizer desensitizer, int maxTextLength) {
    this.collector = collector;
    this.desensitizer = desensitizer;
    this.cut = new io.otl.http.gateway.TextCut(desensitizer, maxTextLength);
    this.metrics = metrics;
    // Every outcome at 0 before the first request (incrementing by 0 again, for a second listener, is harmless).
    for (String outcome : List.of("received", "mapped", "ignored", "refused")) count(outcome, 0);
    countIgnoredMessages(0);
    this.maxEventsPerWrite = maxEventsPerWrite;
    this.maxDecodedBytes = maxDecodedBytes;
  }

  /** {@code traces}, to sit under the node's {@code /v1} prefix with the other routes. */
  public Route route() {
    return path("traces", () -> post(() -> extractRequest(request ->
        entity(Unmarshaller.entityToByteString(), body -> completeWithFuture(handle(request, body))))));
  }

  /**
   * {@code inner} with every error it answers to an OTLP request ({@code POST /v1/traces}) as the
   * OTLP/HTTP specification asks: a {@code google.rpc.Status} with the message, in the request's
   * encoding. For {@code application/x-protobuf} the protobuf Status, not the API's JSON, which an OTLP
   * client cannot read as one (the Java exporter 1.68 dumps it raw into its log, {@code Response body:
   * {"error":…}}; older ones said {@code Unable to parse response body}). For {@code application/json}
   * the Status's JSON encoding, {@code {"code":…,"message":…,"details":[]}}, which the API's {@code
   * {"error","message"}} was not (no {@code code}, no {@code details}; trial t52); its {@code error} is
   * kept beside them, so clients of the API's error shape (design §7.1) read it as before, and a proto3
   * JSON reader ignores it. Errors that already are a Status, and every other request, pass as they are.
   */
  public static Route statusErrors(java.util.function.Supplier<Route> inner) {
    return extractRequest(request -> isOtlp(request) ? mapResponse(r -> asOtlpError(request, r), inner) : inner.get());
  }

  /**
   * {@code response} to {@code request} as {@link #statusErrors} answers it: an error answer to an OTLP
   * request becomes a {@code google.rpc.Status} in the request's encoding; anything else passes as it is.
   * For the answers no route makes: the connection cap's 429 ({@code ConnectionGate}) came as the API's
   * JSON to a protobuf export, which the Java exporter (1.68) dumps raw into its log (trial t115).
   */
  public static HttpResponse asOtlpError(HttpRequest request, HttpResponse response) {
    if (!isOtlp(request)) return response;
    var media = request.entity().getContentType().mediaType();
    String type = media.mainType() + "/" + media.subType();
    if (type.equals("application/x-protobuf")) return asStatus(request, response);
    if (type.equals("application/json")) return asJsonStatus(request, response);
    return response;
  }

  /**
   * The OTLP/HTTP paths: {@code /v1/traces}, and the two signals the node does not read, whose 404 an
   * exporter logs too. An SDK given the base endpoint sends its metrics and logs beside its traces; the
   * API's JSON 404 was dumped raw into the exporter's log, which never said why.
   */
  private static boolean isOtlp(HttpRequest request) {
    return OTLP_PATHS.contains(io.otl.http.ApiRoutes.canonical(request.getUri().path()));
  }

  private static final java.util.Set<String> OTLP_PATHS = java.util.Set.of("/v1/traces", "/v1/logs", "/v1/metrics");

  static final String TRACES_ONLY = "this node reads OTLP traces only (POST /v1/traces): send metrics and logs"
      + " elsewhere or turn their exporters off (OTEL_METRICS_EXPORTER=none, OTEL_LOGS_EXPORTER=none), or give"
      + " the node the traces endpoint alone (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)";

  /** The message of an error answer to {@code request}, which names the one signal read for a 404 of another. */
  private static String errorMessage(HttpRequest request, HttpResponse r, HttpEntity.Strict strict) {
    boolean otherSignal = r.status().intValue() == 404
        && !io.otl.http.ApiRoutes.canonical(request.getUri().path()).equals("/v1/traces");
    if (otherSignal) return TRACES_ONLY;
    String message = errorMessage(r, strict);
    return r.status().intValue() == 413 && !message.contains(TOO_LARGE_HINT) ? message + TOO_LARGE_HINT : message;
  }

  /**
   * What an exporter whose batch got a 413 should change. It drops that batch (512 spans by default)
   * and logs only this message, which named neither the setting nor the batch size (trial t177: an
   * agent with long conversations lost every full batch).
   */
  static final String TOO_LARGE_HINT = "; the exporter drops this batch: export fewer spans per request (the SDKs'"
      + " OTEL_BSP_MAX_EXPORT_BATCH_SIZE, 512 by default) or raise otlp.max-decoded-bytes";

  private static HttpResponse asStatus(HttpRequest request, HttpResponse r) {
    int status = r.status().intValue();
    if (status < 400 || !(r.entity() instanceof HttpEntity.Strict strict)
        || strict.getContentType().mediaType().equals(PROTOBUF.mediaType())) {
      return r;
    }
    return r.withEntity(PROTOBUF, OtlpProtobuf.status(grpcCode(status), errorMessage(request, r, strict)));
  }

  /**
   * The JSON {@code google.rpc.Status} of an error: {@code code} (the gRPC code), {@code message} and
   * {@code details} first, then the API body's other fields ({@code error}, the API's code name).
   */
  private static HttpResponse asJsonStatus(HttpRequest request, HttpResponse r) {
    int status = r.status().intValue();
    if (status < 400 || !(r.entity() instanceof HttpEntity.Strict strict)) return r;
    java.util.Map<String, Object> body = new java.util.LinkedHashMap<>();
    body.put("code", grpcCode(status));
    body.put("message", errorMessage(request, r, strict));
    body.put("details", List.of());
    if (strict.getContentType().mediaType().equals(MediaTypes.APPLICATION_JSON)) {
      try {
        com.fasterxml.jackson.databind.JsonNode json = Json.MAPPER.readTree(strict.getData().toArray());
        if (json != null && json.isObject()) {
          if (json.has("code") && json.has("details")) return r; // already a Status
          json.fields().forEachRemaining(f -> body.putIfAbsent(f.getKey(), f.getValue()));
        }
      } catch (IOException | RuntimeException e) {
        // not JSON after all: the message above is its text or the status's reason
      }
    }
    try {
      return r.withEntity(ContentTypes.APPLICATION_JSON, Json.MAPPER.writeValueAsBytes(body));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The message of an error answer: the API body's {@code message}, else its text, else the status's reason. */
  private static String errorMessage(HttpResponse r, HttpEntity.Strict strict) {
    var media = strict.getContentType().mediaType();
    if (media.equals(MediaTypes.APPLICATION_JSON)) {
      try {
        com.fasterxml.jackson.databind.JsonNode json = Json.MAPPER.readTree(strict.getData().toArray());
        if (json != null) return json.path("message").asText(json.path("error").asText(r.status().reason()));
      } catch (IOException | RuntimeException e) {
        return r.status().reason();
      }
    }
    if (media.mainType().equals("text")) {
      String text = strict.getData().utf8String().strip();
      if (!text.isEmpty()) return text;
    }
    return r.status().reason();
  }

  /** The gRPC code of an HTTP error status (OTLP lets a receiver omit it; the SDKs show the message). */
  private static int grpcCode(int status) {
    return switch (status) {
      case 401 -> 16; // UNAUTHENTICATED
      case 403 -> 7; // PERMISSION_DENIED
      case 404 -> 5; // NOT_FOUND
      case 408, 504 -> 4; // DEADLINE_EXCEEDED
      case 413, 429 -> 8; // RESOURCE_EXHAUSTED
      case 503 -> 14; // UNAVAILABLE
      default -> status < 500 ? 3 : 13; // INVALID_ARGUMENT, INTERNAL
    };
  }

  /**
   * The whole surface of the separate OTLP port: {@code /v1/traces} behind the same bearer token,
   * its raw body up to {@code otlp.max-decoded-bytes} (when above the server's limit) as on the API port (exporters send uncompressed
   * by default). The token is checked on the headers before the body is read: a flood of large bodies
   * without the token would otherwise be read and held like real ones (the API port answers that 401
   * before the body too); such a 401 closes the connection, the rest of the body unread.
   */
  public Route standalone(Auth auth) {
    return mapResponse(io.otl.http.Auth::challenged, () -> statusErrors(() -> io.otl.http.RequestGuard.withAsciiHeaders(() ->
        io.otl.http.RequestGuard.withMetExpectations(() -> io.otl.http.ApiRoutes.withCanonicalPaths(() -> handleExceptions(ApiErrors.exceptionHandler(), () ->
        handleRejections(ApiErrors.otlpPortRejectionHandler(), () -> closedUnlessRead(() -> pathPrefix("v1", () -> auth.protect(
            () -> io.otl.http.RequestGuard.withStrictBody(maxDecodedBytes, this::route)))))))))));
  }

  /** The token's refusal of a request whose body is still arriving closes the connection (the body is not read). */
  private static Route closedUnlessRead(java.util.function.Supplier<Route> inner) {
    return extractRequest(request -> request.entity() instanceof HttpEntity.Strict ? inner.get()
        : mapResponse(r -> r.status().intValue() == 401
            ? r.addHeader(org.apache.pekko.http.javadsl.model.headers.Connection.create("close")) : r, inner));
  }

  private CompletionStage<HttpResponse> handle(HttpRequest request, ByteString raw) {
    var media = request.entity().getContentType().mediaType();
    String type = media.mainType() + "/" + media.subType();
    boolean proto = type.equals("application/x-protobuf");
    if (!proto && !type.equals("application/json")) {
      return done(Json.error(StatusCodes.UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type",
          "Content-Type is " + type + "; OTLP/HTTP accepts application/x-protobuf or application/json"));
    }
    try {
      byte[] body = decode(request, raw);
      List<OtlpSpan> spans = proto ? OtlpProtobuf.decode(body) : OtlpJson.decode(body);
      GenAiMapper.Plan plan = GenAiMapper.map(spans, desensitizer, cut);
      count("received", spans.size());
      count("ignored", plan.ignored());
      countIgnoredMessages(plan.ignoredMessages());
      return write(plan).thenApply(outcome -> {
        count("mapped", outcome.mapped);
        count("refused", outcome.refused);
        String message = String.join("; ", outcome.problems);
        if (outcome.refused > 0 || !plan.unread().isEmpty() || !plan.unreadMessages().isEmpty()) {
          // With the reason: the Java SDK's exporter (1.68) does not read partial_success, so this line is
          // where its user learns why spans were dropped, or why a chat span stored no message (an agent
          // configured wrong, not noise). The reasons name fields and ids, never values, as the Kafka
          // ingest's dead-letter lines do.
          List<String> reasons = new ArrayList<>(outcome.problems);
          reasons.addAll(plan.unread());
          reasons.addAll(plan.unreadMessages());
          log.info("OTLP export: {} spans, {} mapped, {} ignored, {} refused{}: {}", spans.size(), outcome.mapped,
              plan.ignored(), outcome.refused,
              plan.ignoredMessages() == 0 ? "" : ", " + plan.ignoredMessages() + " messages ignored",
              String.join("; ", reasons));
        }
        if (outcome.refused == 0 && plan.ignored() > 0) {
          message = plan.ignored() + " spans were ignored: "
              + (plan.unread().isEmpty() ? "they are not GenAI chat, execute_tool or invoke_agent spans"
                  : String.join("; ", plan.unread()));
        }
        if (plan.ignoredMessages() > 0) {
          // Messages dropped from spans that were stored are said too: the exporter was told all was taken.
          message = (message.isEmpty() ? "" : message + "; ") + plan.ignoredMessages() + " messages were ignored: "
              + String.join("; ", plan.unreadMessages());
        }
        return proto
            ? HttpResponse.create().withEntity(PROTOBUF, OtlpProtobuf.response(outcome.refused, message))
            : HttpResponse.create().withEntity(ContentTypes.APPLICATION_JSON, OtlpJson.response(outcome.refused, message));
      }).exceptionally(ApiErrors::toResponse);
    } catch (BadRequest e) {
      if (!proto) return done(ApiErrors.toResponse(e));
      return done(HttpResponse.create().withStatus(StatusCodes.get(e.status()))
          .withEntity(PROTOBUF, OtlpProtobuf.status(grpcCode(e.status()), e.getMessage())));
    }
  }

  private byte[] decode(HttpRequest request, ByteString raw) {
    String encoding = ContentEncoding.of(request);
    if (encoding.equals("identity") || encoding.isEmpty()) return raw.toArray();
    if (!encoding.equals("gzip")) {
      throw new BadRequest(415, "unsupported_media_type",
          "Content-Encoding is " + encoding + "; OTLP/HTTP bodies may be gzip or not encoded");
    }
    try {
      return StrictGunzip.decode(raw.toArray(), maxDecodedBytes);
    } catch (StrictGunzip.TooLarge e) {
      // With the remedy, as every 413 of this route: a protobuf request's gzip 413 went out without it.
      throw new BadRequest(413, "payload_too_large",
          "the gzip body decompresses to more than " + maxDecodedBytes + " bytes (otlp.max-decoded-bytes)" + TOO_LARGE_HINT);
    } catch (StrictGunzip.Invalid e) {
      throw new BadRequest(400, "invalid_otlp", "Content-Encoding is gzip but the body is not valid gzip: "
          + e.getMessage());
    }
  }

  private static final class Outcome {
    int mapped;
    int refused;
    final List<String> problems = new ArrayList<>();
  }

  /** Each session's inputs as consecutive writes; a session that refuses them refuses its spans. */
  private CompletionStage<Outcome> write(GenAiMapper.Plan plan) {
    Outcome outcome = new Outcome();
    outcome.refused = plan.refused();
    outcome.problems.addAll(plan.problems());
    List<CompletableFuture<Void>> writes = new ArrayList<>();
    for (GenAiMapper.SessionBatch batch : plan.sessions()) {
      // An agent named only by service.name is first left out: a recorded session keeps its own agent
      // (its agent span may come in a later batch), and only a new one is started under that name.
      String agentId = batch.agentFromResource() ? null : batch.agentId();
      // Only chat spans and agent spans' messages are placed against what the session holds; the others are
      // written at once, as before.
      // Queued with the chat requests, a tool span's request that began a new session under service.name held
      // the agent's own chat spans, sent at the same moment, until it was done: they were refused as another
      // agent's, where the retry below (trial t80) lets them take the session while both are under way.
      CompletionStage<String> written = batch.hasChat()
          ? inTurn.run(batch.sessionId(),
              () -> placed(batch).thenCompose(inputs -> writeSession(batch, inputs, agentId, 0)))
          : writeSession(batch, batch.inputs(), agentId, 0);
      writes.add(written.thenAccept(problem -> {
        synchronized (outcome) {
          if (problem == null) {
            outcome.mapped += batch.spans();
          } else {
            outcome.refused += batch.spans();
            if (outcome.problems.size() < 5) outcome.problems.add(problem);
          }
        }
      }).toCompletableFuture());
    }
    return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).thenApply(v -> outcome);
  }

  /**
   * The batch's inputs with its chat spans' messages where the session's conversation has them: an agent
   * that sends only a window of its conversation (the system prompt and its last messages) carries them
   * elsewhere than the conversation does.
   */
  private CompletionStage<List<SessionInput>> placed(GenAiMapper.SessionBatch batch) {
    return collector.lookup(batch.sessionId())
        .thenApply(state -> batch.aligned(state.isEmpty() ? java.util.Set.of() : state.get().eventIds()));
  }

  /** Null when stored (or already stored), else why the session refused the inputs. */
  private CompletionStage<String> writeSession(GenAiMapper.SessionBatch batch, List<SessionInput> inputs,
      String agentId, int from) {
    return writeSession(batch, inputs, agentId, from, true);
  }

  /** @param mayStart false: the session exists, a NOT_FOUND is not answered by starting it under service.name again */
  private CompletionStage<String> writeSession(GenAiMapper.SessionBatch batch, List<SessionInput> inputs,
      String agentId, int from, boolean mayStart) {
    if (from >= inputs.size()) return CompletableFuture.completedFuture(null);
    List<SessionInput> chunk = inputs.subList(from, Math.min(inputs.size(), from + maxEventsPerWrite));
    long start = System.nanoTime();
    return collector.submit(batch.sessionId(), agentId, chunk).thenCompose(reply -> {
      if (reply instanceof AgentSession.Recorded r) {
        if (r.accepted() > 0) metrics.journalWrite((System.nanoTime() - start) / 1e9);
        metrics.eventsAccepted(r.accepted(), r.duplicates());
        return writeSession(batch, inputs, agentId, from + chunk.size());
      }
      AgentSession.Rejected rej = (AgentSession.Rejected) reply;
      if (mayStart && agentId == null && batch.agentId() != null && rej.code() == AgentSession.RejectionCode.NOT_FOUND) {
        return writeSession(batch, inputs, batch.agentId(), from); // a new session: service.name is its agent
      }
      if (batch.agentFromResource() && agentId != null && from == 0 && rej.code() == AgentSession.RejectionCode.CONFLICT) {
        // Another request (its agent span, exported at the same time) started the session between the
        // NOT_FOUND and this write: the session is recorded now and keeps its own agent, as these spans,
        // naming none, would have had it a moment later. They were refused as another agent's (trial t80).
        return writeSession(batch, inputs, null, from, false);
      }
      metrics.eventsRejected(chunk.size());
      // The events API's "its first events must name the agentId" means nothing to an OTel user.
      String why = batch.agentId() == null && rej.code() == AgentSession.RejectionCode.NOT_FOUND
          ? "a new session needs its agent: set gen_ai.agent.name (or gen_ai.agent.id) on a span of it, or the"
              + " resource's service.name"
          : rej.message();
      // logged and answered: a session id holding a key (refused as one) is shown without it
      return CompletableFuture.completedFuture("session " + io.otl.core.Ids.shown(batch.sessionId()) + " refused " + batch.spans()
          + " spans (" + rej.code() + "): " + why);
    });
  }

  private void count(String outcome, long n) {
    metrics.registry().inc("otl_otlp_spans_total",
        "OTLP spans: received, and what became of them (mapped, ignored, refused)",
        MetricsRegistry.labels("outcome", outcome), n);
  }

  private void countIgnoredMessages(long n) {
    metrics.registry().inc("otl_otlp_messages_ignored_total",
        "Messages of OTLP chat spans not stored: a role the node does not know", MetricsRegistry.labels(), n);
  }

  private static CompletionStage<HttpResponse> done(HttpResponse r) {
    return CompletableFuture.completedFuture(r);
  }
}
