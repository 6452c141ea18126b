package io.otl.http;

import static io.otl.http.ModelRoutes.checkAgent;
import static io.otl.http.RequestBodies.body;
import static io.otl.http.RequestBodies.noBody;
import static io.otl.http.RequestBodies.readJson;
import static io.otl.http.SessionRoutes.guard;
import static org.apache.pekko.http.javadsl.server.Directives.completeWithFuture;
import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.path;
import static org.apache.pekko.http.javadsl.server.Directives.pathEndOrSingleSlash;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.post;
import static org.apache.pekko.http.javadsl.server.Directives.put;
import static org.apache.pekko.http.javadsl.server.PathMatchers.segment;

import io.otl.core.api.AgentDirectory;
import io.otl.core.api.PolicyCheck;
import io.otl.core.coordinator.PolicyView;
import io.otl.core.model.ModelVersion;
import io.otl.core.model.RolloutPolicy;
import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.coordinator.CoordinatorState.JobStatus;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.Route;

/** {@code /v1/training/{agentId}…} and {@code /v1/jobs…} over the TrainingCoordinator protocol. */
public final class TrainingRoutes {
  private final ClusterSharding sharding;
  private final Duration askTimeout;
  private final AgentDirectory agents;
  private final PolicyCheck policyCheck;
  /**
   * A policy PUT tells two entities one after the other; two PUTs of one agent sent together
   * interleaved, so the rollout keys of one and the training keys of the other could end in force
   * (found by a new-user trial). PUTs of one agent through this node therefore run in turn.
   */
  private final InTurn policyPuts = new InTurn();

  /**
   * @param policyCheck checks a whole {@code PUT …/policy} body before either entity is told (its
   *     training keys go to the coordinator, its {@code model-update} keys to ModelVersion)
   */
  public TrainingRoutes(ClusterSharding sharding, Duration askTimeout, AgentDirectory agents, PolicyCheck policyCheck) {
    this.sharding = sharding;
    this.askTimeout = askTimeout;
    this.agents = agents;
    this.policyCheck = policyCheck;
  }

  public Route route() {
    return concat(
        pathPrefix("training", () -> pathPrefix(segment(), agentId -> concat(
            pathEndOrSingleSlash(() -> get(() -> completeWithFuture(guard(() -> status(agentId))))),
            path("trigger", () -> post(() -> Actors.actor(actor -> body(b ->
                completeWithFuture(guard(() -> {
                  noBody(b, "a trigger takes no body: set the agent's algorithm, base model and hyperparameters with "
                      + "PUT /v1/training/" + agentId + "/policy, then trigger");
                  return trigger(agentId, actor);
                })))))),
            path("policy", () -> concat(
                get(() -> completeWithFuture(guard(() -> policy(agentId)))),
                put(() -> Actors.actor(actor -> body(b ->
                    completeWithFuture(guard(() -> setPolicy(agentId, b, actor))))))))))),
        pathPrefix("jobs", () -> concat(
            pathEndOrSingleSlash(() -> get(() -> QueryParams.only(List.of("agentId", "status"), query ->
                completeWithFuture(guard(() -> list(query.given("agentId"), query.given("status"))))))),
            pathPrefix(segment(), jobId -> concat(
                pathEndOrSingleSlash(() -> get(() -> completeWithFuture(guard(() -> job(jobId))))),
                path("cancel", () -> post(() -> Actors.actor(actor -> body(b ->
                    completeWithFuture(guard(() -> {
                      noBody(b, "a cancel takes no body");
                      return cancel(jobId, actor);
                    })))))))))));
  }

  private EntityRef<TrainingCoordinator.Command> coordinator(String agentId) {
    return sharding.entityRefFor(TrainingCoordinator.ENTITY_TYPE_KEY, agentId);
  }

  /** Runs {@code then} for a known agent; 404 otherwise, without starting an entity for it. */
  private CompletionStage<HttpResponse> known(String agentId, java.util.function.Supplier<CompletionStage<HttpResponse>> then) {
    return agents.exists(TrainingCoordinator.persistenceId(agentId).id()).thenCompose(exists -> exists
        ? then.get()
        : CompletableFuture.completedFuture(Json.error(StatusCodes.NOT_FOUND, "not_found",
            "agent " + io.otl.core.Ids.shown(agentId) + " has no training coordinator yet (no completed trajectory)")));
  }

  /**
   * Runs {@code then} when the job's agent has a coordinator; otherwise the job is unknown, and the
   * 404 says that of the job the client asked about, not of an agent it never named.
   */
  private CompletionStage<HttpResponse> knownJob(String jobId, String agentId,
      java.util.function.Supplier<CompletionStage<HttpResponse>> then) {
    return agents.exists(TrainingCoordinator.persistenceId(agentId).id()).thenCompose(exists -> exists
        ? then.get()
        : CompletableFuture.completedFuture(ApiErrors.toResponse(unknownJob(jobId))));
  }

  private CompletionStage<HttpResponse> status(String agentId) {
    checkAgent(agentId);
    return known(agentId, () -> coordinator(agentId)
        .<TrainingCoordinator.CoordinatorView>ask(TrainingCoordinator.GetStatus::new, askTimeout)
        .thenApply(Json::ok));
  }

  private CompletionStage<HttpResponse> trigger(String agentId, String actor) {
    checkAgent(agentId);
    return known(agentId, () -> coordinator(agentId).<TrainingCoordinator.TriggerReply>ask(
            reply -> new TrainingCoordinator.Trigger(actor, reply), askTimeout)
        .thenApply(r -> r instanceof TrainingCoordinator.TriggerAccepted a
            ? Json.response(StatusCodes.ACCEPTED, a)
            : refused((TrainingCoordinator.Refused) r)));
  }

  private EntityRef<ModelVersion.Command> modelVersion(String agentId) {
    return sharding.entityRefFor(ModelVersion.ENTITY_TYPE_KEY, agentId);
  }

  /** The training policy (the coordinator's) and the rollout settings in force (ModelVersion's), as one view. */
  private CompletionStage<HttpResponse> policy(String agentId) {
    checkAgent(agentId);
    return known(agentId, () -> coordinator(agentId).<TrainingCoordinator.PolicyReply>ask(
            TrainingCoordinator.GetPolicy::new, askTimeout)
        .thenCompose(r -> r instanceof PolicyView v
            ? modelVersion(agentId).<ModelVersion.RolloutPolicyReply>ask(ModelVersion.GetRolloutPolicy::new, askTimeout)
                .thenApply(m -> combined(v, m))
            : CompletableFuture.completedFuture(refused((TrainingCoordinator.Refused) r))));
  }

  /**
   * The body is the agent's whole set of run-time overrides ({@code {}} clears them), training and
   * rollout ({@code model-update.*}) keys alike. Both parts are checked before either entity is told
   * (a bad key in one changes neither); then the rollout part goes to ModelVersion, which persists
   * it only when it differs, and the training part to the coordinator. Unlike the reads, a valid PUT
   * may be an agent's first fact: an operator sets the threshold or the algorithm before the first
   * trajectory arrives, and the coordinator starts with it. A refused body persists nothing, so the
   * agent stays unknown.
   */
  private CompletionStage<HttpResponse> setPolicy(String agentId, org.apache.pekko.util.ByteString bytes, String actor) {
    checkAgent(agentId);
    @SuppressWarnings("unchecked")
    Map<String, Object> overrides = Json.MAPPER.convertValue(readJson(bytes), Map.class);
    RolloutPolicy.Split parts = RolloutPolicy.split(overrides);
    try {
      policyCheck.check(agentId, parts.training(), parts.rollout());
    } catch (IllegalArgumentException e) {
      // The entities' own refusal, given before either is told: 400, nothing changed.
      return CompletableFuture.completedFuture(Json.rejected(new TrainingCoordinator.Refused(
          TrainingCoordinator.ErrorCode.INVALID_INPUT, e.getMessage())));
    }
    if (io.otl.core.session.PiiRules.keyInId(agentId)) {
      // A policy may be an agent's first fact: not under an id holding a key (trial t159), refused before
      // either entity starts (sharding journals the ids it starts); an agent the journal has keeps its policy.
      return agents.exists(TrainingCoordinator.persistenceId(agentId).id())
          .thenCompose(c -> c ? CompletableFuture.completedFuture(true)
              : agents.exists(ModelVersion.ENTITY_TYPE_KEY.name() + "|" + agentId))
          .thenCompose(known -> known ? putPolicy(agentId, parts, actor)
              : CompletableFuture.completedFuture(Json.rejected(new TrainingCoordinator.Refused(
                  TrainingCoordinator.ErrorCode.INVALID_INPUT, io.otl.core.Ids.keyProblem("agentId", agentId)))));
    }
    return putPolicy(agentId, parts, actor);
  }

  private CompletionStage<HttpResponse> putPolicy(String agentId, RolloutPolicy.Split parts, String actor) {
    return policyPuts.run(agentId, () -> modelVersion(agentId).<ModelVersion.RolloutPolicyReply>ask(
            reply -> new ModelVersion.SetRolloutPolicy(parts.rollout(), actor, reply), askTimeout)
        .thenCompose(m -> m instanceof ModelVersion.RolloutPolicyView
            ? coordinator(agentId).<TrainingCoordinator.PolicyReply>ask(
                    reply -> new TrainingCoordinator.SetPolicy(parts.training(), actor, reply), askTimeout)
                .thenApply(r -> r instanceof PolicyView v ? combined(v, m) : refused((TrainingCoordinator.Refused) r))
            : CompletableFuture.completedFuture(Json.rejected((ModelVersion.Failure) m))));
  }


  /** The coordinator's view with the rollout keys in force and their overrides; the later change names who and when. */
  private static HttpResponse combined(PolicyView training, ModelVersion.RolloutPolicyReply reply) {
    if (!(reply instanceof ModelVersion.RolloutPolicyView rollout)) {
      return Json.rejected((ModelVersion.Failure) reply);
    }
    Map<String, Object> policy = new LinkedHashMap<>(training.policy());
    policy.putAll(rollout.policy());
    Map<String, Object> changed = new LinkedHashMap<>(training.overrides());
    changed.putAll(rollout.overrides());
    boolean rolloutLater = rollout.changedAt() != null
        && (training.changedAt() == null || rollout.changedAt().isAfter(training.changedAt()));
    return Json.ok(new PolicyView(training.agentId(), policy, changed,
        rolloutLater ? rollout.changedBy() : training.changedBy(),
        rolloutLater ? rollout.changedAt() : training.changedAt()));
  }

  private CompletionStage<HttpResponse> job(String jobId) {
    String agentId = agentOf(jobId);
    return knownJob(jobId, agentId, () -> coordinator(agentId).<TrainingCoordinator.JobReply>ask(
            reply -> new TrainingCoordinator.GetJob(jobId, reply), askTimeout)
        .thenApply(r -> r instanceof TrainingCoordinator.JobView v ? Json.ok(v) : refused((TrainingCoordinator.Refused) r)));
  }

  private CompletionStage<HttpResponse> cancel(String jobId, String actor) {
    String agentId = agentOf(jobId);
    return knownJob(jobId, agentId, () -> coordinator(agentId).<TrainingCoordinator.CancelReply>ask(
            reply -> new TrainingCoordinator.CancelJob(jobId, actor, reply), askTimeout)
        .thenApply(r -> r instanceof TrainingCoordinator.CancelAccepted a
            ? Json.response(StatusCodes.ACCEPTED, a)
            : refused((TrainingCoordinator.Refused) r)));
  }

  private CompletionStage<HttpResponse> list(Optional<String> agentId, Optional<String> statusName) {
    JobStatus status = statusName.map(TrainingRoutes::parseStatus).orElse(null);
    agentId.ifPresent(ModelRoutes::checkAgent);
    // An agent without a coordinator has no job: it is not asked, as asking starts its entity and
    // sharding journals the id of every entity it starts (an id holding a key too, trial t167).
    CompletionStage<List<String>> ids = agentId.<CompletionStage<List<String>>>map(
        a -> agents.exists(TrainingCoordinator.persistenceId(a).id()).thenApply(known -> known ? List.of(a) : List.of()))
        .orElseGet(agents::agentIds);
    return ids.thenCompose(list -> {
      List<CompletableFuture<TrainingCoordinator.JobList>> asks = new ArrayList<>();
      for (String a : list) {
        asks.add(coordinator(a).<TrainingCoordinator.JobList>ask(
            reply -> new TrainingCoordinator.ListJobs(status, reply), askTimeout).toCompletableFuture());
      }
      return CompletableFuture.allOf(asks.toArray(CompletableFuture[]::new)).thenApply(v -> {
        List<TrainingCoordinator.JobView> jobs = new ArrayList<>();
        for (var f : asks) jobs.addAll(f.join().jobs());
        jobs.sort(Comparator.comparing(TrainingRoutes::requestedAt).reversed());
        return Json.ok(Map.of("jobs", jobs));
      });
    });
  }

  private static java.time.Instant requestedAt(TrainingCoordinator.JobView v) {
    return v.history().isEmpty() ? java.time.Instant.EPOCH : v.history().get(0).at();
  }

  private static JobStatus parseStatus(String s) {
    for (JobStatus st : JobStatus.values()) if (st.name().equalsIgnoreCase(s)) return st;
    throw BadRequest.invalid("status is not one of the allowed: REQUESTED, SUBMITTED, RUNNING, SUCCEEDED, FAILED, CANCELLED");
  }

  private static String agentOf(String jobId) {
    return TrainingCoordinator.agentIdOf(jobId)
        .filter(a -> io.otl.core.Ids.isValidAgentId(a))
        .orElseThrow(() -> unknownJob(jobId));
  }

  /**
   * 404 for a job id no coordinator knows. The id is named only when it has a job id's shape (its
   * agent part a valid agent id): any other path segment is client text, an e-mail or a phone
   * number as likely as a typo, and answers never echo it; one holding an API key is named by its
   * digest (trial t167).
   */
  static BadRequest unknownJob(String jobId) {
    boolean shaped = TrainingCoordinator.agentIdOf(jobId).filter(io.otl.core.Ids::isValidAgentId).isPresent();
    return new BadRequest(404, "not_found", (shaped ? "job " + io.otl.core.Ids.shown(jobId) + " is unknown" : "no job has this id")
        + " (job ids look like job-<n>-<agentId>)");
  }

  private static HttpResponse refused(TrainingCoordinator.Refused r) {
    return Json.rejected(r);
  }
}
