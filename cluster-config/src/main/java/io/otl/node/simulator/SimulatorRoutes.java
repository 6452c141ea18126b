package io.otl.node.simulator;

import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.pekko.NotUsed;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.MediaTypes;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.javadsl.unmarshalling.Unmarshaller;
import org.apache.pekko.stream.javadsl.Source;
import org.apache.pekko.util.ByteString;

/**
 * HTTP surface of the simulator. Same paths, fields and status codes as the real services:
 *
 * <ul>
 *   <li>Ray Jobs (dashboard), as Ray's own {@code JobSubmissionClient} calls it: {@code GET
 *       /api/version}, {@code GET|POST /api/jobs/}, {@code GET|DELETE /api/jobs/<id>}, {@code POST
 *       /api/jobs/<id>/stop}, {@code GET /api/jobs/<id>/logs}, {@code GET /api/jobs/<id>/logs/tail} (a
 *       WebSocket, {@link LogTail}). Errors are plain text, as Ray's are:
 *       400 for a bad submission or the deletion of a live job, 500 for a duplicate submission id
 *       (Ray 2.58's head wraps its job agent's 400), 404 "Job X does not exist".
 *   <li>Trinity proxy: {@code POST /v1/chat/completions} (OpenAI/vLLM shapes, streaming too: {@link
 *       ChatSimulation}), {@code POST /feedback}, {@code POST /commit}, {@code GET|POST /allocate},
 *       {@code GET /metrics}, {@code GET /health}.
 *   <li>Admin (simulator only): {@code GET /simulator/stats}, {@code GET /simulator/feedback},
 *       {@code POST /simulator/jobs/<id>/fail}, {@code POST /simulator/jobs/<id>/finish} (a RUNNING
 *       job ends now as its timer would end it).
 * </ul>
 *
 * Every response carries {@code X-Trinity-Simulator: true}.
 */
final class SimulatorRoutes extends AllDirectives {

  static final String SIMULATOR_HEADER = "X-Trinity-Simulator";
  /**
   * The Ray release whose Jobs REST API the simulator answers like (checked with that release's
   * Python client); Ray's clients parse it as a version, so it must be one. That this is no Ray is
   * said in the other fields.
   */
  static final String RAY_VERSION = "2.58.0";

  private final ObjectMapper mapper;
  private final RayJobsSimulation ray;
  private final ProxySimulation proxy;
  private final ChatSimulation chat;
  private final ModelServerSimulation models;

  SimulatorRoutes(ObjectMapper mapper, RayJobsSimulation ray, ProxySimulation proxy, ModelServerSimulation models) {
    this.mapper = mapper;
    this.ray = ray;
    this.proxy = proxy;
    this.models = models;
    this.chat = new ChatSimulation(mapper, proxy, models);
  }

  Route route() {
    Route all =
        concat(
            pathPrefix("api", this::rayRoutes),
            // vLLM sets no request timeout: a slow simulated answer is answered, not cut by the node's 20 s.
            path(segment("v1").slash("chat").slash("completions"), () -> post(() -> withoutRequestTimeout(() ->
                withJson(this::chat)))),
            path(segment("v1").slash("models"), () -> get(() -> complete(json(200, models.models())))),
            // The load acts at once, its answer may come late: a load slower than the node's timeout.
            path(segment("v1").slash("load_lora_adapter"), () -> post(() -> withoutRequestTimeout(() ->
                withJson(b -> vllm(models.load(b), models.loadAnswerDelay()))))),
            path(segment("v1").slash("unload_lora_adapter"), () -> post(() -> withJson(b -> vllm(models.unload(b))))),
            path("feedback", () -> post(() -> withJson(this::feedback))),
            path("allocate", () -> concat(get(this::allocate), post(this::allocate))),
            path("commit", () -> post(() -> { proxy.commit(); return complete(json(200, mapper.createObjectNode().put("status", "success"))); })),
            path("metrics", () -> get(() -> complete(json(200, proxy.metrics())))),
            path("health", () -> get(() -> complete(StatusCodes.OK))),
            pathPrefix("simulator", this::adminRoutes));
    // Sealed inside, so that rejections (404, 405) carry the simulator header too.
    return respondWithHeader(RawHeader.create(SIMULATOR_HEADER, "true"), all::seal);
  }

  private Route rayRoutes() {
    return concat(
        path("version", () -> get(() -> complete(json(200, mapper.createObjectNode()
            .put("version", "4")
            .put("ray_version", RAY_VERSION)
            .put("ray_commit", "trinity-simulator")
            .put("session_name", "trinity-simulator")
            .put("simulator", "Trinity simulator: not Ray, jobs train nothing"))))),
        pathPrefix("jobs", () -> concat(
            pathEndOrSingleSlash(() -> concat(
                get(() -> complete(json(200, ray.listJson()))),
                post(() -> withJson(this::submit)))),
            path(segment(), id -> concat(
                get(() -> withJob(id, job -> complete(json(200, job.toJson())))),
                delete(() -> deleteJob(id)))),
            path(segment().slash("stop"), id -> post(() -> withStopped(id, ray.stop(id)))),
            path(segment().slash("logs"), id -> get(() -> withJob(id, job ->
                complete(json(200, mapper.createObjectNode().put("logs", job.logs())))))),
            path(segment().slash("logs").slash("tail"), id -> get(() -> withJob(id, job ->
                handleWebSocketMessages(LogTail.of(job))))))));
  }

  private Route adminRoutes() {
    return concat(
        path("stats", () -> get(() -> complete(json(200, ray.stats())))),
        path("feedback", () -> get(() -> complete(json(200, proxy.receivedFeedback())))),
        path(segment("models").slash(segment()).slash("quality"), name -> concat(
            get(() -> complete(json(200, mapper.valueToTree(models.qualityOf(name))))),
            post(() -> withAdminJson(b -> models.setQuality(name, b)
                .map(e -> complete(json(400, mapper.createObjectNode().put("error", "invalid_quality").put("message", e))))
                .orElseGet(() -> complete(json(200, mapper.valueToTree(models.qualityOf(name))))))))),
        path("models", () -> get(() -> complete(json(200, models.stats())))),
        path(segment("models").slash("load-delay"), () -> post(() -> withAdminJson(b -> models.setLoadAnswerDelay(b)
            .map(e -> complete(json(400, mapper.createObjectNode().put("error", "invalid_delay").put("message", e))))
            .orElseGet(() -> complete(json(200, mapper.createObjectNode()
                .put("ms", models.loadAnswerDelay().toMillis()))))))),
        path(segment("jobs").slash(segment()).slash("quality"), id -> concat(
            get(() -> ray.job(id)
                .map(job -> complete(json(200, mapper.valueToTree(ray.qualityOf(job.id)))))
                .orElseGet(() -> complete(text(404, "Job " + id + " does not exist")))),
            post(() -> withAdminJson(setJobQuality(id))))),
        path(segment("jobs").slash(segment()).slash("fail"), id -> post(() ->
            withStopped(id, ray.fail(id, "RuntimeError: failure injected through POST /simulator/jobs/" + id + "/fail")))),
        path(segment("jobs").slash(segment()).slash("finish"), id -> post(() -> ray.finish(id)
            .map(done -> complete(json(200, mapper.createObjectNode().put("finished", done))))
            .orElseGet(() -> complete(text(404, "Job " + id + " does not exist"))))));
  }

  /**
   * {@code POST /simulator/jobs/<id>/quality}: what the job's checkpoint will score, set while it
   * is PENDING or RUNNING; a body that names anything but the evaluation metrics, an unknown job
   * and an ended one (its checkpoint is written) are refused and change nothing.
   */
  private Function<JsonNode, Route> setJobQuality(String id) {
    return b -> {
      Optional<String> invalid = RayJobsSimulation.invalidQuality(b);
      if (invalid.isPresent()) {
        return complete(json(400, mapper.createObjectNode().put("error", "invalid_quality").put("message", invalid.get())));
      }
      Optional<RayJobsSimulation.SimJob> found = ray.job(id);
      if (found.isEmpty()) {
        return complete(text(404, "Job " + id + " does not exist"));
      }
      RayJobsSimulation.SimJob job = found.get();
      String status = job.status();
      if (!RayJobsSimulation.isLive(status)) {
        return complete(json(409, mapper.createObjectNode().put("error", "job_ended").put("message",
            "job " + job.id + " has ended (" + status + "): a quality is what the checkpoint a job writes as it "
                + "completes scores; set it while the job is PENDING or RUNNING")));
      }
      Map<String, Double> q = new java.util.LinkedHashMap<>();
      b.fields().forEachRemaining(e -> q.put(e.getKey(), e.getValue().doubleValue()));
      ray.setQuality(job.id, q);
      return complete(json(200, mapper.valueToTree(q)));
    };
  }

  private Route submit(JsonNode body) {
    Object outcome = ray.submit(body);
    if (outcome instanceof RayJobsSimulation.Refusal r) {
      return complete(text(r.status(), r.text()));
    }
    RayJobsSimulation.SimJob job = (RayJobsSimulation.SimJob) outcome;
    return complete(json(200, mapper.createObjectNode().put("job_id", job.id).put("submission_id", job.id)));
  }

  private Route deleteJob(String id) {
    return ray.delete(id)
        .map(outcome -> outcome instanceof RayJobsSimulation.Refusal r
            ? complete(text(r.status(), r.text()))
            : complete(json(200, mapper.createObjectNode().put("deleted", true))))
        .orElseGet(() -> complete(text(404, "Job " + id + " does not exist")));
  }

  /** Trinity's proxy hands out a session id for an agent run to tag its requests with. */
  private Route allocate() {
    return complete(json(200, mapper.createObjectNode().put("session_id", proxy.allocateSession())));
  }

  private Route chat(JsonNode body) {
    Object outcome = chat.answer(body);
    if (outcome instanceof ChatSimulation.Refusal r) return complete(openAiError(r));
    ChatSimulation.Answer answer = (ChatSimulation.Answer) outcome;
    if (!answer.stream()) return after(answer.delay(), json(200, answer.completion()));
    Source<ByteString, NotUsed> events = Source.from(chat.sseEvents(answer))
        .map(e -> ByteString.fromString("data: " + e + "\n\n"));
    if (!answer.chunkDelay().isZero()) events = events.throttle(1, answer.chunkDelay());
    // Streamed answers wait too: the delay (and a quality's added latency) used to apply to whole
    // answers only, so a streamed call to a "slow" model was answered at once.
    return after(answer.delay(), HttpResponse.create().withEntity(HttpEntities.createChunked(
        MediaTypes.TEXT_EVENT_STREAM.toContentType(), events)));
  }

  /** The response, sent once {@code delay} has passed (at once when zero). */
  private Route after(Duration delay, HttpResponse response) {
    if (delay.isZero()) return complete(response);
    return completeWithFuture(CompletableFuture.supplyAsync(() -> response,
        CompletableFuture.delayedExecutor(delay.toMillis(), TimeUnit.MILLISECONDS)));
  }

  /** vLLM answers success as plain text and a refusal as its error object. */
  private Route vllm(ModelServerSimulation.Reply r) {
    return vllm(r, Duration.ZERO);
  }

  private Route vllm(ModelServerSimulation.Reply r, Duration delay) {
    return after(delay, r.error() == null ? text(r.status(), r.text()) : json(r.status(), r.error()));
  }

  private Route feedback(JsonNode body) {
    Optional<String> error = proxy.feedback(body);
    return error
        .map(e -> complete(json(400, mapper.createObjectNode().put("error", e))))
        .orElseGet(() -> complete(json(200, mapper.createObjectNode().put("status", "success"))));
  }

  private Route withJob(String id, Function<RayJobsSimulation.SimJob, Route> inner) {
    return ray.job(id).map(inner).orElseGet(() -> complete(text(404, "Job " + id + " does not exist")));
  }

  private Route withStopped(String id, Optional<Boolean> stopped) {
    return stopped
        .map(s -> complete(json(200, mapper.createObjectNode().put("stopped", s))))
        .orElseGet(() -> complete(text(404, "Job " + id + " does not exist")));
  }

  /** Parses the body as JSON; malformed JSON is a 400 with the parser's reason. */
  private Route withJson(Function<JsonNode, Route> inner) {
    return entity(Unmarshaller.entityToString(), raw -> {
      JsonNode body;
      try {
        body = raw.isBlank() ? mapper.createObjectNode() : mapper.readTree(raw);
      } catch (Exception e) {
        return complete(text(400, "JSONDecodeError: request body is not valid JSON: " + e.getMessage()));
      }
      return inner.apply(body);
    });
  }

  /**
   * The simulator's own admin routes answer in their {"error","message"} shape: Ray's plain-text
   * JSONDecodeError, with the parser's multi-line location, read as a crash to a user who mistyped a curl.
   */
  private Route withAdminJson(Function<JsonNode, Route> inner) {
    return entity(Unmarshaller.entityToString(), raw -> {
      JsonNode body;
      try {
        body = raw.isBlank() ? mapper.createObjectNode() : mapper.readTree(raw);
      } catch (Exception e) {
        return complete(json(400, mapper.createObjectNode().put("error", "invalid_json")
            .put("message", "the body is not JSON: " + firstLine(e.getMessage()))));
      }
      return inner.apply(body);
    });
  }

  private static String firstLine(String message) {
    String m = message == null ? "" : message;
    int nl = m.indexOf('\n');
    return nl < 0 ? m : m.substring(0, nl);
  }

  private HttpResponse openAiError(ChatSimulation.Refusal r) {
    return json(r.status(), mapper.createObjectNode()
        .put("object", "error")
        .put("message", r.message())
        .put("type", r.type())
        .put("code", r.status()));
  }

  private HttpResponse json(int status, JsonNode body) {
    try {
      return HttpResponse.create()
          .withStatus(status)
          .withEntity(ContentTypes.APPLICATION_JSON, mapper.writeValueAsBytes(body));
    } catch (Exception e) {
      return text(500, "cannot serialize response: " + e.getMessage());
    }
  }

  private static HttpResponse text(int status, String body) {
    return HttpResponse.create().withStatus(status).withEntity(ContentTypes.TEXT_PLAIN_UTF8, body);
  }
}
