package io.otl.http;

import static io.otl.http.SessionRoutes.guard;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import io.otl.core.Ids;
import io.otl.core.api.AuditLog;
import io.otl.core.api.AuditLog.Kind;
import java.time.Instant;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * {@code GET /v1/audit/{kind}/{id}/timeline[?asOf=]}: the command line's text timeline ({@code audit
 * <kind> <id> --format text}), rendered by the node that holds the embedded journal (issue #14).
 */
public final class AuditTimelineRoutes {

  /** Renders an entity's timeline as text (the node's {@code Timeline}); fails with {@link AuditLog.NotFound}. */
  public interface Timelines {
    CompletionStage<String> text(Kind kind, String id, Instant asOf);
  }

  private final Timelines timelines;

  public AuditTimelineRoutes(Timelines timelines) {
    this.timelines = timelines;
  }

  public Route route() {
    return pathPrefix("audit", () -> pathPrefix(segment(), kind -> pathPrefix(segment(), id -> path("timeline", () ->
        get(() -> QueryParams.only(java.util.List.of("asOf"), query ->
            completeWithFuture(guard(() -> timeline(kind, id, query.given("asOf").orElse(null))))))))));
  }

  private CompletionStage<HttpResponse> timeline(String kindName, String id, String asOfText) {
    Kind kind = Kind.parse(kindName).orElseThrow(() -> BadRequest.invalid("kind is not one of the allowed: " + Kind.allowed()));
    String problem = switch (kind) {
      case SESSION -> Ids.problem("sessionId", id, Ids.MAX_SESSION_ID);
      case COORDINATOR, MODEL -> Ids.problem("agentId", id, Ids.MAX_AGENT_ID);
      case JOB -> {
        if (io.otl.core.coordinator.TrainingCoordinator.agentIdOf(id).isEmpty()) throw TrainingRoutes.unknownJob(id);
        yield null;
      }
    };
    if (problem != null) throw BadRequest.invalid(problem);
    Instant asOf = asOfText == null ? null : QueryParams.instant("asOf", asOfText);
    return timelines.text(kind, id, asOf)
        .thenApply(text -> HttpResponse.create().withEntity(HttpEntities.create(ContentTypes.TEXT_PLAIN_UTF8, text)))
        .exceptionally(t -> {
          Throwable e = t;
          while ((e instanceof CompletionException || e instanceof ExecutionException) && e.getCause() != null) {
            e = e.getCause();
          }
          if (e instanceof AuditLog.NotFound) return Json.error(StatusCodes.NOT_FOUND, "not_found", e.getMessage());
          return ApiErrors.toResponse(e);
        });
  }

}
