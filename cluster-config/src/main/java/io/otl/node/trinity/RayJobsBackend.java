package io.otl.node.trinity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.training.BackendJobStatus;
import io.otl.core.training.BackendJobStatus.State;
import io.otl.core.training.BackendSubmission;
import io.otl.core.training.OutputModel;
import io.otl.core.training.TrainingBackend;
import io.otl.core.training.TrainingBackendException;
import io.otl.core.training.TrainingBackendException.Kind;
import io.otl.core.training.TrainingJobSpec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.regex.Pattern;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link TrainingBackend} that runs {@code trinity run --config <yaml>} as a job through the Ray Jobs
 * REST API of a Ray head node (design §5, {@code ray-jobs}).
 *
 * <ul>
 *   <li>submit: writes the rendered config next to the dataset, then {@code POST /api/jobs/} with
 *       {@code submission_id = jobId}. Ray refuses a repeat with "Job with submission_id … already
 *       exists" ({@link #isDuplicate}); that is treated as success once {@code GET /api/jobs/<jobId>}
 *       confirms the job.
 *   <li>status: {@code GET /api/jobs/<jobId>}; on SUCCEEDED the output model is looked up under the
 *       job's checkpoint directory, which travels in the submission's metadata ({@value
 *       #META_CHECKPOINT_DIR}) so that any node can resolve it after a crash. A SUCCEEDED job without
 *       a Hugging Face checkpoint is reported as FAILED: there is no model to hand over.
 *   <li>evidence (issue #16): when the job's held-out set ({@link TrinityConfigRenderer#evalPath})
 *       has tasks, a
 *       Trinity bench config ({@link BenchConfig}, {@code <jobId>.bench.yaml}) is written too and
 *       chained after training in the entrypoint ({@code trinity run --config <train> && trinity
 *       run --config <bench> && python3 <jobId>.bench_scores.py …}: {@link BenchScores} turns the
 *       bench's tensorboard scores into {@value CheckpointLocator#BENCH_SCORES_FILE}, which the gate reads.
 *       An empty or missing eval set skips the bench and the candidate has no evidence.
 *   <li>cancel: {@code POST /api/jobs/<jobId>/stop}; logs: {@code GET /api/jobs/<jobId>/logs}.
 * </ul>
 */
public final class RayJobsBackend implements TrainingBackend {

  public static final String TYPE = "ray-jobs";

  /** Metadata keys we add to every submission (Ray metadata is a string map). */
  public static final String META_AGENT_ID = "otl_agent_id";
  public static final String META_JOB_ID = "otl_job_id";
  public static final String META_ALGORITHM = "otl_algorithm";
  public static final String META_CONFIG_PATH = "otl_config_path";
  public static final String META_CHECKPOINT_DIR = "otl_checkpoint_dir";
  /** Where the job's gate evidence comes from ({@link CheckpointLocator.Evidence}); absent: LEGACY. */
  public static final String META_EVIDENCE = "otl_evidence";
  public static final String META_BENCH_CONFIG_PATH = "otl_bench_config_path";

  private static final Logger log = LoggerFactory.getLogger(RayJobsBackend.class);
  private static final Pattern SHELL_SAFE = Pattern.compile("[A-Za-z0-9._/:@+=,-]+");
  private static final String JOBS = "/api/jobs/";

  private final JsonHttpClient http;
  private final RayJobsSettings settings;
  private final TrinityConfigRenderer renderer;
  private final CheckpointLocator locator;
  private final Executor blockingIo;

  public RayJobsBackend(ActorSystem<?> system, RayJobsSettings settings) {
    this(system, settings, false);
  }

  /** @param lora train LoRA adapters (the serving backend loads versions as adapters) */
  public RayJobsBackend(ActorSystem<?> system, RayJobsSettings settings, boolean lora) {
    ObjectMapper mapper = new ObjectMapper();
    this.http = new JsonHttpClient(system, settings.endpoint(), mapper, "Ray Jobs API");
    this.settings = settings;
    this.renderer = new TrinityConfigRenderer(settings.nodeNum(), settings.gpuPerNode(), lora);
    this.locator = new CheckpointLocator(mapper);
    this.blockingIo = system.dispatchers().lookup(DispatcherSelector.blocking());
  }

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public CompletionStage<BackendSubmission> submit(TrainingJobSpec spec) {
    return CompletableFuture.supplyAsync(() -> writeConfigs(spec), blockingIo)
        .thenCompose(configs -> http.post(JOBS, submitBody(spec, configs)))
        .thenCompose(
            reply -> {
              if (reply.isSuccess()) {
                JsonNode body = http.parse("POST", JOBS, reply);
                String id = body.path("submission_id").asText(spec.jobId());
                log.info("Submitted training job {} of agent {} to Ray as {}", spec.jobId(), spec.agentId(), id);
                return CompletableFuture.completedFuture(new BackendSubmission(id));
              }
              if (isDuplicate(reply, spec.jobId())) {
                // A repeat after a crash or a retry: the job exists, never create a second one. But only our
                // own submission is adopted: a job of this id that another client (or an earlier journal,
                // whose job ids restarted at job-1) submitted would hand this job its outcome and checkpoint.
                String path = JOBS + spec.jobId();
                return http.expectJson(http.get(path), "GET", path)
                    .thenApply(
                        existing -> {
                          notSubmittedByUs(existing, spec).ifPresent(why -> {
                            throw new TrainingBackendException(Kind.REJECTED, reply.status(), why, null);
                          });
                          log.info(
                              "Training job {} was already submitted to Ray (now {}); not submitting again",
                              spec.jobId(),
                              existing.path("status").asText());
                          return new BackendSubmission(spec.jobId());
                        });
              }
              if (reply.status() == 404) {
                // No Jobs API at all: most often the endpoint is not a Ray dashboard (e.g. this
                // node's own API, which AgentScope's samples put at 127.0.0.1:8080).
                throw new TrainingBackendException(Kind.NOT_FOUND, 404, "Ray Jobs API POST " + JOBS + " at "
                    + settings.endpoint().shown() + " returned 404: there is no Ray Jobs API at "
                    + "agentscope.training.training-runner.trinity-endpoint; point it at the Ray head's dashboard "
                    + "(port 8265 by default), or leave it unset to use this node's simulator"
                    + " (answer: " + JsonHttpClient.excerpt(reply.body()) + ")", null);
              }
              throw http.statusError("POST", JOBS, reply);
            });
  }

  @Override
  public CompletionStage<BackendJobStatus> status(String jobId) {
    String path = JOBS + jobId;
    return http.expectJson(http.get(path), "GET", path)
        .thenCompose(
            job -> {
              State state = parseState(job.path("status").asText(), path);
              String message = job.path("message").asText("");
              if (state != State.SUCCEEDED) {
                return CompletableFuture.completedFuture(new BackendJobStatus(state, message, null));
              }
              String checkpointDir = job.path("metadata").path(META_CHECKPOINT_DIR).asText("");
              CheckpointLocator.Evidence evidence = evidenceOf(job.path("metadata").path(META_EVIDENCE).asText(""));
              return CompletableFuture.supplyAsync(
                  () -> succeeded(jobId, message, checkpointDir, evidence), blockingIo);
            });
  }

  @Override
  public CompletionStage<Void> cancel(String jobId) {
    String path = JOBS + jobId + "/stop";
    // Ray answers {"stopped": false} for a job that had already ended: nothing was stopped, and the job
    // may have SUCCEEDED (a model to hand over) or FAILED. Taking that answer for a stop recorded such a
    // job CANCELLED and lost its model; refused, the coordinator polls how the job really ended.
    return http.expectJson(http.post(path, null), "POST", path).thenApply(body -> {
      if (body.path("stopped").isBoolean() && !body.path("stopped").asBoolean()) {
        throw new TrainingBackendException(Kind.REJECTED, 200,
            "Ray did not stop job " + jobId + " (stopped: false): it had already ended", null);
      }
      return null;
    });
  }

  @Override
  public CompletionStage<String> logs(String jobId) {
    String path = JOBS + jobId + "/logs";
    return http.expectJson(http.get(path), "GET", path).thenApply(body -> body.path("logs").asText(""));
  }

  /**
   * Whether Ray refused the submission because {@code jobId} exists. Ray's job manager raises the
   * ValueError; its job agent answers it with 400, but the head (what we call) forwards submissions
   * to an agent and answers that failed forward with 500, the agent's traceback inside (Ray 2.58).
   * Both are accepted, and only with this job's id in the text: any other 500 stays a failure to retry.
   */
  static boolean isDuplicate(JsonHttpClient.Reply reply, String jobId) {
    return (reply.status() == 400 || reply.status() == 500)
        && reply.body().contains("Job with submission_id " + jobId + " already exists");
  }

  /**
   * Why the Ray job {@code existing}, found under {@code spec}'s submission id, is not this job's own
   * earlier submission: its metadata names another job or agent (or none: not submitted by a node), or
   * another dataset (an earlier journal's job of the same id). Empty when it is ours; a submission of a
   * build that did not send the dataset's hash is taken as ours by its ids.
   */
  static Optional<String> notSubmittedByUs(JsonNode existing, TrainingJobSpec spec) {
    JsonNode meta = existing.path("metadata");
    String entrypoint = JsonHttpClient.excerpt(existing.path("entrypoint").asText(""));
    if (!spec.jobId().equals(meta.path(META_JOB_ID).asText(null))
        || !spec.agentId().equals(meta.path(META_AGENT_ID).asText(null))) {
      return Optional.of("Ray already has a job with submission_id " + spec.jobId() + " not submitted by this node for "
          + "agent " + spec.agentId() + " (its entrypoint: " + entrypoint + "); it is not taken for this job. "
          + "Another client used the id: delete that job on the Ray cluster (ray job delete " + spec.jobId()
          + " once it has ended), then trigger again");
    }
    String sha = spec.metadata().get("datasetSha256");
    String theirs = meta.path("datasetSha256").asText(null);
    if (sha != null && theirs != null && !sha.equals(theirs)) {
      return Optional.of("Ray already has a job with submission_id " + spec.jobId() + " for agent " + spec.agentId()
          + " trained on another dataset (sha256 " + theirs + ", this job's " + sha + "): a job of an earlier journal "
          + "of this agent, whose job ids restarted; it is not taken for this job. Delete it on the Ray cluster "
          + "(ray job delete " + spec.jobId() + " once it has ended), then trigger again");
    }
    return Optional.empty();
  }

  private static CheckpointLocator.Evidence evidenceOf(String label) {
    for (CheckpointLocator.Evidence e : CheckpointLocator.Evidence.values()) {
      if (e.name().equals(label)) return e;
    }
    return CheckpointLocator.Evidence.LEGACY;
  }

  private BackendJobStatus succeeded(
      String jobId, String message, String checkpointDir, CheckpointLocator.Evidence evidence) {
    if (checkpointDir.isBlank()) {
      return new BackendJobStatus(
          State.FAILED,
          "Ray reports job " + jobId + " SUCCEEDED but its metadata has no " + META_CHECKPOINT_DIR
              + " (not submitted by this control plane?), so its output model cannot be found",
          null);
    }
    Path jobDir = Path.of(checkpointDir);
    Optional<OutputModel> model;
    try {
      model = locator.locate(jobDir, evidence);
    } catch (IOException e) {
      throw new TrainingBackendException(
          Kind.UNAVAILABLE, 0, "cannot read checkpoints of job " + jobId + " under " + jobDir + ": " + e, e);
    }
    return model
        .map(m -> new BackendJobStatus(State.SUCCEEDED, message, m))
        .orElseGet(
            () ->
                new BackendJobStatus(
                    State.FAILED,
                    "Ray reports job " + jobId + " SUCCEEDED but there is no Hugging Face checkpoint under "
                        + jobDir + "/global_step_N/actor/huggingface",
                    null));
  }

  /** The configs of one job: training, and the bench (null when the eval set is empty). */
  record Configs(Path train, Path bench, List<String> converter, boolean emptyEvalSet) {}

  private Configs writeConfigs(TrainingJobSpec spec) {
    Path train = write(TrinityConfigRenderer.configPath(spec), renderer.render(spec));
    if (!hasEvalTasks(TrinityConfigRenderer.evalPath(spec))) {
      // A job exported with a lineage held out nothing: no evidence. One without (not exported by
      // the continual exporter) keeps the legacy evidence file.
      boolean heldOutNothing = spec.metadata().containsKey("startFrom");
      log.info("Training job {} of agent {}: held-out eval set is empty, no bench step", spec.jobId(), spec.agentId());
      return new Configs(train, null, List.of(), heldOutNothing);
    }
    Path bench = write(TrinityConfigRenderer.benchConfigPath(spec), renderer.renderBench(spec));
    Path script = write(BenchScores.scriptPath(spec), BenchScores.script());
    return new Configs(train, bench, BenchScores.command(spec, script), false);
  }

  static boolean hasEvalTasks(Path evalFile) {
    try {
      return Files.isRegularFile(evalFile) && Files.size(evalFile) > 0;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read eval set " + evalFile + ": " + e.getMessage(), e);
    }
  }

  private static Path write(Path target, String text) {
    try {
      Files.createDirectories(target.getParent());
      // Write-then-move, so Trinity never reads a half-written file; a retry rewrites the same text.
      Path tmp = Files.createTempFile(target.getParent(), target.getFileName().toString(), ".tmp");
      Files.writeString(tmp, text, StandardCharsets.UTF_8);
      Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      return target;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write Trinity config " + target + ": " + e.getMessage(), e);
    }
  }

  private Map<String, Object> submitBody(TrainingJobSpec spec, Configs configs) {
    Path configPath = configs.train();
    Map<String, String> metadata = new LinkedHashMap<>(spec.metadata());
    metadata.put(META_AGENT_ID, spec.agentId());
    metadata.put(META_JOB_ID, spec.jobId());
    metadata.put(META_ALGORITHM, spec.algorithm());
    metadata.put(META_CONFIG_PATH, configPath.toString());
    metadata.put(META_CHECKPOINT_DIR, TrinityConfigRenderer.checkpointJobDir(spec).toString());
    metadata.put(META_EVIDENCE, (configs.bench() != null ? CheckpointLocator.Evidence.BENCH
        : configs.emptyEvalSet() ? CheckpointLocator.Evidence.EMPTY_EVAL_SET : CheckpointLocator.Evidence.LEGACY).name());
    if (configs.bench() != null) {
      metadata.put(META_BENCH_CONFIG_PATH, configs.bench().toString());
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("entrypoint", configs.bench() == null ? entrypoint(configPath)
        : entrypoint(configPath, configs.bench(), configs.converter()));
    body.put("submission_id", spec.jobId());
    body.put("metadata", metadata);
    body.put("entrypoint_num_gpus", settings.entrypointNumGpus());
    return body;
  }

  /**
   * Training, then (only if it succeeded) the bench of the same run, then the converter of the
   * bench's tensorboard scores into bench_scores.json ({@link BenchScores}).
   */
  static String entrypoint(Path configPath, Path benchPath, List<String> converter) {
    StringBuilder line = new StringBuilder(entrypoint(configPath)).append(" && ").append(entrypoint(benchPath));
    if (!converter.isEmpty()) {
      line.append(" &&");
      converter.forEach(w -> line.append(' ').append(shellQuote(w)));
    }
    return line.toString();
  }

  /** The command Ray runs; the path is shell-quoted when it needs to be (Ray runs it in a shell). */
  static String entrypoint(Path configPath) {
    return "trinity run --config " + shellQuote(configPath.toString());
  }

  static String shellQuote(String word) {
    return SHELL_SAFE.matcher(word).matches() ? word : "'" + word.replace("'", "'\\''") + "'";
  }

  private static State parseState(String status, String path) {
    try {
      return State.valueOf(status);
    } catch (IllegalArgumentException e) {
      throw new TrainingBackendException(
          Kind.UNAVAILABLE, 200, "Ray Jobs API GET " + path + " returned unknown status '" + status + "'", e);
    }
  }
}
