package io.otl.http;

import static io.otl.http.SessionRoutes.guard;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.pathEndOrSingleSlash;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import io.otl.core.api.AuditLog;
import io.otl.core.api.AuditLog.Kind;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The audit (design §7.1): an entity's journal, paged, and its state as of a time, read from the
 * journal only (no entity is addressed, nothing is written).
 *
 * <ul>
 *   <li>{@code GET /v1/audit/{kind}/{id}?asOf=<ISO-8601>&after=<cursor>&limit=<1..1000>}, kind =
 *       session, coordinator (id = agentId), model (id = agentId), job (id = jobId) → 200 {@code
 *       {"kind","id","events":[{"seqNr","at","type","event"}],"next":<cursor|null>,"stateAsOf":{…}}}.
 *       {@code limit} defaults to 100; {@code next} is the cursor to pass as {@code after} for the
 *       next page. With {@code asOf} the events are those known at that time and {@code stateAsOf}
 *       is the state then, in the shape of the entity's own GET route.
 *   <li>{@code GET /v1/audit/lineage/model/{agentId}?version=v7} (all versions without {@code
 *       version}): version → job → dataset manifest (count, sha256, path) → trajectory ids.
 *   <li>{@code GET /v1/audit/lineage/session/{sessionId}}: the jobs that took the session, whether
 *       it is in their dataset, the model versions they produced.
 *   <li>{@code GET /v1/audit/lineage/job/{jobId}}: a job's trajectories, dataset and model.
 * </ul>
 * 400 for an unknown kind, an invalid id, asOf, after or limit; 404 for an unknown entity, or an
 * {@code asOf} before the entity existed; 503 when the journal cannot be read.
 */
public final class AuditRoutes {
  public static final int DEFAULT_LIMIT = 100;
  private static final String LINEAGE_KINDS =
      "lineage kinds are model, session and job (a coordinator's jobs are under /v1/audit/coordinator/{agentId})";

  private final AuditLog audit;

  public AuditRoutes(AuditLog audit) {
    this.audit = audit;
  }

  public Route route() {
    return pathPrefix("audit", () -> concat(
        pathPrefix("lineage", () -> pathPrefix(segment(), kind -> pathPrefix(segment(), id ->
            pathEndOrSingleSlash(() -> get(() -> QueryParams.only(List.of("version"), query ->
                completeWithFuture(guard(() -> lineage(kind, id, query.given("version")))))))))),
        pathPrefix(segment(), kind -> pathPrefix(segment(), id -> pathEndOrSingleSlash(() -> get(() -> entity(kind, id)))))));
  }

  private Route entity(String kind, String id) {
    return QueryParams.only(List.of("asOf", "after", "limit"), query ->
        completeWithFuture(guard(() -> audit(kind, id, query.given("asOf"), query.given("after"),
            query.given("limit")))));
  }

  private CompletionStage<HttpResponse> audit(
      String kindName, String id, Optional<String> asOfText, Optional<String> afterText, Optional<String> limitText) {
    Kind kind = kind(kindName);
    check(kind, id);
    Instant asOf = asOfText.map(t -> QueryParams.instant("asOf", t)).orElse(null);
    long after = afterText.map(AuditRoutes::cursor).orElse(0L);
    int limit = limitText.map(AuditRoutes::limit).orElse(DEFAULT_LIMIT);
    CompletionStage<AuditLog.Page> page = audit.page(kind, id, after, limit, asOf);
    CompletionStage<Object> state = asOf == null ? CompletableFuture.completedFuture(null)
        : audit.stateAsOf(kind, id, asOf);
    return state.thenCombine(page, (s, p) -> {
      Map<String, Object> body = new LinkedHashMap<>();
      body.put("kind", p.kind());
      body.put("id", p.id());
      body.put("events", p.events());
      body.put("next", p.next());
      if (asOf != null) body.put("stateAsOf", s);
      return Json.ok(body);
    }).exceptionally(AuditRoutes::failure);
  }

  private CompletionStage<HttpResponse> lineage(String kindName, String id, Optional<String> version) {
    // Not kind(): its message lists coordinator, which has no lineage.
    Kind kind = Kind.parse(kindName).filter(k -> k != Kind.COORDINATOR)
        .orElseThrow(() -> BadRequest.invalid(LINEAGE_KINDS));
    check(kind, id);
    if (version.isPresent() && kind != Kind.MODEL) {
      throw BadRequest.invalid("version is a parameter of the model lineage only");
    }
    version.ifPresent(ModelRoutes::checkVersion);
    CompletionStage<?> answer = switch (kind) {
      case MODEL -> audit.modelLineage(id, version.orElse(null));
      case SESSION -> audit.sessionLineage(id);
      case JOB -> audit.jobLineage(id);
      case COORDINATOR -> throw BadRequest.invalid(LINEAGE_KINDS);
    };
    return answer.<HttpResponse>thenApply(Json::ok).exceptionally(AuditRoutes::failure);
  }

  private static Kind kind(String name) {
    return Kind.parse(name).orElseThrow(() -> BadRequest.invalid(
        "kind is not one of the allowed: " + Kind.allowed()));
  }

  private static void check(Kind kind, String id) {
    switch (kind) {
      case SESSION -> SessionRoutes.checkSessionId(id);
      case COORDINATOR, MODEL -> ModelRoutes.checkAgent(id);
      case JOB -> {
        // An id without a job id's shape names no job: 404 as GET /v1/jobs/{jobId} answers it.
        if (io.otl.core.coordinator.TrainingCoordinator.agentIdOf(id).isEmpty()) throw TrainingRoutes.unknownJob(id);
      }
    }
  }


  private static long cursor(String text) {
    try {
      long v = QueryParams.integer(text);
      if (v >= 0) return v;
    } catch (NumberFormatException e) {
      // below
    }
    throw BadRequest.invalid("after is not a cursor: the 'next' of a previous page (an integer from 0 to "
        + "999999999999999999)");
  }

  private static int limit(String text) {
    try {
      long v = QueryParams.integer(text);
      if (v >= 1 && v <= AuditLog.MAX_LIMIT) return (int) v;
    } catch (NumberFormatException e) {
      // below
    }
    throw BadRequest.invalid("limit is not an integer from 1 to " + AuditLog.MAX_LIMIT);
  }

  private static HttpResponse failure(Throwable t) {
    Throwable e = t;
    while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
      e = e.getCause();
    }
    if (e instanceof AuditLog.NotFound) return Json.error(StatusCodes.NOT_FOUND, "not_found", e.getMessage());
    if (e instanceof IllegalArgumentException) return Json.error(StatusCodes.BAD_REQUEST, "invalid_request", e.getMessage());
    // A JDBC failure (ApiErrors.databaseCause) is the 503 every route answers: the SQLState and a WARN a
    // minute, never the driver's text (it named the database's host, tables and SQL offsets; trial t108).
    return ApiErrors.toResponse(e);
  }
}
