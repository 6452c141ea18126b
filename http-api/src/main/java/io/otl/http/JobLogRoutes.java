package io.otl.http;

import static io.otl.http.SessionRoutes.guard;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import io.otl.core.api.AgentDirectory;
import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.training.TrainingBackend;
import io.otl.core.training.TrainingBackendException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * {@code GET /v1/jobs/{jobId}/logs?offset=&limit=}: the trainer's logs as the training backend
 * keeps them (Ray's {@code GET /api/jobs/<id>/logs}), paged by line (see {@link LogPage}).
 *
 * <p>A job the coordinator does not know is 404. A job with nothing to read yet (not submitted)
 * or on a backend that keeps no per-job logs ({@code trinity-proxy}: one long-running serve
 * process, not a job) answers 200 with an empty page and a {@code note} saying why, so a console
 * can poll every job the same way.
 */
public final class JobLogRoutes {
  private final ClusterSharding sharding;
  private final Duration askTimeout;
  private final AgentDirectory agents;
  private final Optional<TrainingBackend> backend;

  /** @param backend the batch backend that keeps job logs; empty when the node runs trinity-proxy */
  public JobLogRoutes(ClusterSharding sharding, Duration askTimeout, AgentDirectory agents,
      Optional<TrainingBackend> backend) {
    this.sharding = sharding;
    this.askTimeout = askTimeout;
    this.agents = agents;
    this.backend = backend;
  }

  public Route route() {
    return pathPrefix("jobs", () -> pathPrefix(segment(), jobId -> path("logs", () -> get(() ->
        QueryParams.only(java.util.List.of("offset", "limit"), query ->
            completeWithFuture(guard(() -> logs(jobId, query.given("offset"), query.given("limit")))))))));
  }

  private CompletionStage<HttpResponse> logs(String jobId, Optional<String> offsetParam, Optional<String> limitParam) {
    int offset = LogPage.param("offset", offsetParam, 0, Integer.MAX_VALUE);
    int limit = LogPage.param("limit", limitParam, LogPage.DEFAULT_LIMIT, LogPage.MAX_LIMIT);
    String agentId = TrainingCoordinator.agentIdOf(jobId)
        .filter(io.otl.core.Ids::isValidAgentId)
        .orElseThrow(() -> unknown(jobId));
    return agents.exists(TrainingCoordinator.persistenceId(agentId).id()).thenCompose(exists -> {
      if (!exists) throw unknown(jobId);
      return sharding.entityRefFor(TrainingCoordinator.ENTITY_TYPE_KEY, agentId)
          .<TrainingCoordinator.JobReply>ask(reply -> new TrainingCoordinator.GetJob(jobId, reply), askTimeout);
    }).thenCompose(reply -> {
      if (!(reply instanceof TrainingCoordinator.JobView job)) throw unknown(jobId);
      return page(job, offset, limit);
    });
  }

  private CompletionStage<HttpResponse> page(TrainingCoordinator.JobView job, int offset, int limit) {
    String type = job.backend() == null ? null : job.backend().type();
    String externalId = job.backend() == null ? null : job.backend().externalId();
    if (backend.isEmpty() || (type != null && !type.equals(backend.get().type()))) {
      return done(LogPage.empty(job.jobId(), type, offset, limit, "the " + (type == null ? "configured" : type)
          + " backend keeps no per-job logs (trinity-proxy trains in one long-running serve process); see its own logs"));
    }
    if (externalId == null || externalId.isBlank()) {
      // A job that ended before submission (a failed pre-flight, a cancel) will never have logs: "yet" misled.
      String note = job.status().isActive()
          ? " and was not submitted to the trainer yet: no logs so far"
          : " and was never submitted to the trainer: it has no logs (its error and history say why it ended)";
      return done(LogPage.empty(job.jobId(), backend.get().type(), offset, limit, "job " + job.jobId() + " is "
          + job.status() + note));
    }
    return backend.get().logs(externalId)
        .thenApply(text -> Json.ok(LogPage.of(job.jobId(), backend.get().type(), text, offset, limit)))
        .exceptionally(e -> {
          Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
          if (cause instanceof TrainingBackendException b && b.kind() == TrainingBackendException.Kind.NOT_FOUND) {
            return Json.ok(LogPage.empty(job.jobId(), backend.get().type(), offset, limit,
                "the trainer no longer knows job " + externalId + " (Ray forgets jobs when its head restarts): no logs"));
          }
          // The trainer is down or refused: not the client's fault, and worth a retry.
          return Json.error(StatusCodes.SERVICE_UNAVAILABLE, "unavailable",
              "cannot read the logs of job " + job.jobId() + " from the trainer: " + cause.getMessage());
        });
  }

  private static CompletionStage<HttpResponse> done(LogPage page) {
    return CompletableFuture.completedFuture(Json.ok(page));
  }

  private static BadRequest unknown(String jobId) {
    return TrainingRoutes.unknownJob(jobId);
  }
}
