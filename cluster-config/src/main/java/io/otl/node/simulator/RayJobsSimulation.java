package io.otl.node.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.Cancellable;
import org.apache.pekko.actor.typed.Scheduler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.concurrent.ExecutionContextExecutor;

/**
 * The Ray Jobs side of the simulator: jobs keyed by submission id that move PENDING → RUNNING →
 * SUCCEEDED on timers (or FAILED / STOPPED), with Ray's field names, messages and refusals.
 *
 * <p>Failure on request: submission metadata {@code "simulate": "fail"} fails the job when it would
 * have succeeded; {@code "simulate": "no-checkpoint"} succeeds without writing a checkpoint; {@link
 * #fail} fails it at once and {@link #finish} ends a RUNNING one at once (admin endpoints). Metric overrides: metadata {@code "metric.<name>":
 * "<number>"}.
 */
final class RayJobsSimulation {

  /** A refusal, answered as Ray does: a status and a plain-text body. */
  record Refusal(int status, String text) {}

  static final String PENDING_MESSAGE = "Job has not started yet.";
  static final String PENDING_RESOURCES =
      " It may be waiting for resources (CPUs, GPUs, memory, custom resources) to become available.";
  static final String PENDING_RUNTIME_ENV = " It may be waiting for the runtime environment to be set up.";
  /** Ray's JobErrorType when the entrypoint command exits non-zero. */
  static final String ENTRYPOINT_ERROR = "JOB_ENTRYPOINT_COMMAND_ERROR";
  static final String RUNNING_MESSAGE = "Job is currently running.";
  static final String SUCCEEDED_MESSAGE = "Job finished successfully.";
  static final String STOPPED_MESSAGE = "Job was intentionally stopped.";

  private static final Set<String> REQUEST_FIELDS =
      Set.of(
          "entrypoint", "submission_id", "job_id", "runtime_env", "metadata", "entrypoint_num_cpus",
          "entrypoint_num_gpus", "entrypoint_memory", "entrypoint_resources", "entrypoint_label_selector");
  private static final Logger log = LoggerFactory.getLogger(RayJobsSimulation.class);

  private final ObjectMapper mapper;
  private final SimulatorSettings settings;
  private final Scheduler scheduler;
  private final ExecutionContextExecutor blockingIo;
  private final CheckpointWriter checkpoints;
  private final BenchStep bench;
  private final Map<String, Map<String, Double>> quality = new ConcurrentHashMap<>();
  private volatile TrinitySimulator.RealBench realBench;
  private final Map<String, SimJob> jobs = new ConcurrentHashMap<>();
  private final RayJobStore store;
  private final Map<String, AtomicInteger> accepted = new ConcurrentHashMap<>();
  private final Map<String, AtomicInteger> duplicates = new ConcurrentHashMap<>();
  private final List<Cancellable> timers = new CopyOnWriteArrayList<>();
  private final AtomicInteger driverIds = new AtomicInteger(1);
  private volatile boolean stopped;

  RayJobsSimulation(
      ObjectMapper mapper, SimulatorSettings settings, Scheduler scheduler, ExecutionContextExecutor blockingIo) {
    this.mapper = mapper;
    this.settings = settings;
    this.scheduler = scheduler;
    this.blockingIo = blockingIo;
    this.checkpoints = new CheckpointWriter(mapper);
    this.bench = new BenchStep(mapper);
    this.store = new RayJobStore(mapper, settings.workDir());
    recover();
  }

  /**
   * The jobs of an earlier run on this work-dir: ended ones as they ended, live ones started again
   * (as if the cluster had gone on running them), so a restarted node's poll finds its job.
   */
  private void recover() {
    for (RayJobStore.Stored stored : store.load()) {
      Object parsed = stored.request() == null ? null : parse(stored.request(), stored.submittedAt());
      if (!(parsed instanceof SimJob job)) continue;
      jobs.put(job.id, job);
      accepted.computeIfAbsent(job.id, k -> new AtomicInteger()).incrementAndGet();
      if (isLive(stored.status())) {
        job.log("Job " + job.id + " resumed after the simulator restarted (it was " + stored.status() + ")");
        log.info("[trinity-simulator] resumed job {} ({} before the restart)", job.id, stored.status());
        schedule(settings.pendingDuration(), () -> start(job));
      } else {
        job.restore(stored);
      }
    }
  }

  /**
   * Admin: the quality (metric → number) of the checkpoint job {@code id} will write, i.e. its
   * {@code eval_metrics.json} and what any later bench scores it. Set before the job completes.
   */
  void setQuality(String id, Map<String, Double> metrics) {
    quality.put(id, Map.copyOf(metrics));
    log.info("[trinity-simulator] quality of job {}'s checkpoint set to {}", id, metrics);
  }

  /** The quality set for job {@code id} by {@link #setQuality}, empty when none was. */
  Map<String, Double> qualityOf(String id) {
    return quality.getOrDefault(id, Map.of());
  }

  /**
   * Checks the body of {@code POST /simulator/jobs/<id>/quality}: an object of the evaluation
   * metrics the checkpoint's {@code eval_metrics.json} and bench report (the rates in [0, 1], the
   * latency in ms, at least 0), each a JSON number. Anything else is named in the answer: read
   * leniently, a misspelt {@code task-succes-rate} was a 200 that left the default quality, and the
   * candidate meant to be worse passed its offline gate.
   */
  static Optional<String> invalidQuality(JsonNode body) {
    String example = "{\"task-success-rate\":0.5,\"user-satisfaction\":0.6,\"response-latency\":900}";
    if (!body.isObject()) {
      return Optional.of("the body must be a JSON object: " + example);
    }
    for (var it = body.fields(); it.hasNext(); ) {
      var e = it.next();
      String key = e.getKey();
      if (!CheckpointWriter.DEFAULT_METRICS.containsKey(key)) {
        return Optional.of(key + ": not an evaluation metric; the metrics are task-success-rate (0 to 1), "
            + "user-satisfaction (0 to 1) and response-latency (ms, at least 0)");
      }
      boolean latency = key.equals("response-latency");
      String range = latency ? "a number of ms, at least 0" : "a number between 0 and 1";
      if (!e.getValue().isNumber()) {
        return Optional.of(key + ": must be " + range);
      }
      double v = e.getValue().doubleValue();
      if (!(v >= 0) || Double.isInfinite(v) || (!latency && v > 1)) {
        return Optional.of(key + ": must be " + range);
      }
    }
    return Optional.empty();
  }

  void setRealBench(TrinitySimulator.RealBench hook) {
    realBench = hook;
  }

  /** {@code POST /api/jobs/}: the created job, or Ray's refusal. */
  synchronized Object submit(JsonNode request) {
    Object parsed = parse(request, System.currentTimeMillis());
    if (!(parsed instanceof SimJob job)) {
      return parsed;
    }
    String id = job.id;
    if (jobs.containsKey(id)) {
      duplicates.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
      return duplicateRefusal(id);
    }
    jobs.put(id, job);
    accepted.computeIfAbsent(id, k -> new AtomicInteger()).incrementAndGet();
    job.log("Job " + id + " submitted to the Trinity simulator: " + job.entrypoint);
    log.info("[trinity-simulator] accepted job {} ({})", id, job.entrypoint);
    store.save(id, job.stored());
    schedule(settings.pendingDuration(), () -> start(job));
    return job;
  }

  /**
   * Ray 2.58's answer to a repeated submission id. Its job head forwards every submission to a job
   * agent; the agent refuses the duplicate with 400, and the head turns that failed forward into a
   * 500 whose traceback carries the agent's answer. So a client sees 500 with the agent's ValueError
   * inside, not the agent's 400: tested clients must recognise it by the text.
   */
  static Refusal duplicateRefusal(String id) {
    String agent = "Traceback (most recent call last):\n  (Trinity simulator: Ray's job agent)\n"
        + "ValueError: Job with submission_id " + id + " already exists. Please use a different submission_id.\n";
    return new Refusal(
        500,
        "Traceback (most recent call last):\n  (Trinity simulator: Ray's job head, forwarding to the job agent)\n"
            + "RuntimeError: Request failed with status code 400: " + agent + ".\n");
  }

  /** A submission checked as Ray checks it: the (unregistered) job, or Ray's refusal. */
  private Object parse(JsonNode request, long submittedAt) {
    if (request == null || !request.isObject()) {
      return new Refusal(400, "TypeError: the request body must be a JSON object (Trinity simulator)");
    }
    for (Iterator<String> it = request.fieldNames(); it.hasNext(); ) {
      String field = it.next();
      if (!REQUEST_FIELDS.contains(field)) {
        return new Refusal(400, "TypeError: JobSubmitRequest.__init__() got an unexpected keyword argument '" + field + "'");
      }
    }
    JsonNode entrypoint = request.get("entrypoint");
    if (entrypoint == null || entrypoint.isNull()) {
      return new Refusal(400, "TypeError: JobSubmitRequest.__init__() missing 1 required positional argument: 'entrypoint'");
    }
    if (!entrypoint.isTextual() || entrypoint.asText().isBlank()) {
      return new Refusal(400, "TypeError: entrypoint must be a non-empty string, got " + entrypoint);
    }
    Map<String, String> metadata = new LinkedHashMap<>();
    JsonNode meta = request.path("metadata");
    if (!meta.isMissingNode() && !meta.isNull()) {
      if (!meta.isObject()) {
        return new Refusal(400, "TypeError: metadata must be a dict, got " + meta.getNodeType());
      }
      for (Iterator<Map.Entry<String, JsonNode>> it = meta.fields(); it.hasNext(); ) {
        Map.Entry<String, JsonNode> e = it.next();
        if (!e.getValue().isTextual()) {
          return new Refusal(400, "TypeError: metadata values must be strings, got " + e.getKey() + "=" + e.getValue());
        }
        metadata.put(e.getKey(), e.getValue().asText());
      }
    }
    Resources resources;
    try {
      resources = Resources.of(request);
    } catch (IllegalArgumentException e) {
      return new Refusal(400, "TypeError: " + e.getMessage());
    }
    String id = request.path("submission_id").asText(request.path("job_id").asText(""));
    if (id.isBlank()) {
      id = "raysubmit_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    }
    // Stored with its id, so that a generated one is the same after a restart.
    ObjectNode asStored = ((ObjectNode) request).deepCopy().put("submission_id", id);
    return new SimJob(id, entrypoint.asText(), metadata, resources, asStored, submittedAt);
  }

  /** By submission id or, as Ray's find_job_by_ids does, by the driver's job id. */
  Optional<SimJob> job(String id) {
    SimJob bySubmission = jobs.get(id);
    if (bySubmission != null) {
      return Optional.of(bySubmission);
    }
    return jobs.values().stream().filter(j -> id.equals(j.driverJobId())).findFirst();
  }

  /**
   * {@code DELETE /api/jobs/<id>}: empty for an unknown job; Ray deletes only jobs in a terminal
   * state, anything else is refused (Ray's job manager raises; answered 400 here, a client error).
   */
  synchronized Optional<Object> delete(String id) {
    Optional<SimJob> found = job(id);
    if (found.isEmpty()) {
      return Optional.empty();
    }
    SimJob job = found.get();
    String status = job.status();
    if (isLive(status)) {
      return Optional.of(new Refusal(400, "Attempted to delete job '" + job.id + "', but it is in a non-terminal state "
          + status + "."));
    }
    jobs.remove(job.id);
    store.delete(job.id);
    log.info("[trinity-simulator] deleted job {} ({})", job.id, status);
    return Optional.of(Boolean.TRUE);
  }

  List<SimJob> jobs() {
    List<SimJob> all = new ArrayList<>(jobs.values());
    all.sort(Comparator.comparingLong(j -> j.submittedAt));
    return all;
  }

  /** {@code POST /api/jobs/<id>/stop}: empty for an unknown job, else whether it was stopped. */
  Optional<Boolean> stop(String id) {
    return job(id).map(job -> job.finish("STOPPED", STOPPED_MESSAGE, null));
  }

  /** Admin: fail a job now, as if its entrypoint had crashed. */
  Optional<Boolean> fail(String id, String reason) {
    return job(id).map(job -> job.finish("FAILED", failedMessage(reason), 1));
  }

  /**
   * Admin: end a RUNNING job now as its timer would (checkpoint, bench, SUCCEEDED or the failure
   * metadata asks for), so a test can hold jobs RUNNING with a long {@code running} and finish
   * each on cue. Empty for an unknown job, else whether it ended now (false: not RUNNING).
   */
  Optional<Boolean> finish(String id) {
    return job(id).map(job -> {
      synchronized (job) {
        if (!job.status.equals("RUNNING")) {
          return false;
        }
        complete(job);
        return true;
      }
    });
  }

  ObjectNode stats() {
    ObjectNode stats = mapper.createObjectNode();
    stats.put("simulator", "trinity");
    stats.put("jobs", jobs.size());
    ObjectNode perId = stats.putObject("submissions");
    jobs().forEach(
        j -> {
          ObjectNode s = perId.putObject(j.id);
          s.put("accepted", accepted.getOrDefault(j.id, new AtomicInteger()).get());
          s.put("duplicates", duplicates.getOrDefault(j.id, new AtomicInteger()).get());
          s.put("status", j.status());
        });
    return stats;
  }

  void shutdown() {
    stopped = true;
    timers.forEach(Cancellable::cancel);
  }

  private void start(SimJob job) {
    synchronized (job) {
      if (!job.status.equals("PENDING")) {
        return;
      }
      try {
        job.run = TrinityRunConfig.fromEntrypoint(job.entrypoint, settings.workDir());
        job.bench = BenchStep.parse(job.entrypoint, settings.workDir()).orElse(null);
      } catch (Exception e) {
        job.log("Error: " + e.getMessage());
        job.finish("FAILED", failedMessage(e.getMessage()), 1);
        return;
      }
      job.status = "RUNNING";
      job.message = RUNNING_MESSAGE;
      job.driverJobId = String.format("%02x000000", driverIds.getAndIncrement() % 256);
      job.log("Trinity-RFT (simulated) running " + job.run.configFile() + ", checkpoints in " + job.run.jobDir());
    }
    schedule(settings.runningDuration(), () -> complete(job));
  }

  private static final int SIMULATED_STEPS = 3;

  private void complete(SimJob job) {
    synchronized (job) {
      if (!job.status.equals("RUNNING")) {
        return;
      }
      String simulate = job.metadata.getOrDefault("simulate", "");
      if (simulate.equals("fail")) {
        job.log("Simulated failure requested by metadata simulate=fail");
        job.finish("FAILED", failedMessage("RuntimeError: simulated training failure (metadata simulate=fail)"), 1);
        return;
      }
      // Trinity prints its step metrics; the control plane's log page parses them into step/loss points.
      for (int step = 1; step <= SIMULATED_STEPS; step++) {
        job.log(String.format(java.util.Locale.ROOT, "step %d: actor/loss=%.4f", step, 1.0 / (step + 1)));
      }
      if (!simulate.equals("no-checkpoint")) {
        try {
          Map<String, String> effective = new LinkedHashMap<>(job.metadata);
          quality.getOrDefault(job.id, Map.of())
              .forEach((k, v) -> effective.put(CheckpointWriter.METRIC_PREFIX + k, Double.toString(v)));
          Path step = checkpoints.write(job.run, effective);
          job.log("Saved checkpoint and evaluation metrics to " + step);
          TrinitySimulator.RealBench hook = realBench;
          if (job.bench != null && hook != null && !job.bench.converter().isEmpty()) {
            hook.run(job.bench.jobDir(), step, job.bench.evalFile(), job.bench.converter());
            job.log("Bench of " + step.getFileName() + " and " + job.bench.stableModel() + " by the test's Trinity, "
                + "converted by " + job.bench.converter().get(1));
          } else if (job.bench != null) {
            Path scores = bench.run(job.bench, step);
            job.log("Bench (mode: bench) of " + step.getFileName() + " and " + job.bench.stableModel()
                + " on " + job.bench.evalFile().getFileName() + ": scores in " + scores);
          }
        } catch (Exception e) {
          job.log("Error: " + e.getMessage());
          job.finish("FAILED", failedMessage("cannot write checkpoint: " + e.getMessage()), 1);
          return;
        }
      }
      job.finish("SUCCEEDED", SUCCEEDED_MESSAGE, 0);
    }
  }

  private void schedule(Duration delay, Runnable task) {
    if (!stopped) {
      timers.add(scheduler.scheduleOnce(delay, task, blockingIo));
    }
  }

  /**
   * Whether a job in {@code status} has not ended yet (Ray's non-terminal states), the one test
   * that decides resuming after a restart, refusing a delete and finishing a job.
   */
  static boolean isLive(String status) {
    return status.equals("PENDING") || status.equals("RUNNING");
  }

  private static String failedMessage(String reason) {
    return "Job entrypoint command failed with exit code 1, last available logs (truncated to 20,000 chars):\n"
        + reason;
  }

  /** One job; fields change only under the job's lock. */
  final class SimJob {
    final String id;
    final String entrypoint;
    final Map<String, String> metadata;
    final Resources resources;
    /** Ray's start_time: when the job was submitted (ms). */
    final long submittedAt;
    private final JsonNode request;
    private final StringBuilder logs = new StringBuilder();
    private String status = "PENDING";
    private String message;
    private String errorType;
    private Long endTime;
    private Integer exitCode;
    private String driverJobId;
    private TrinityRunConfig run;
    private BenchStep.BenchRun bench;

    SimJob(String id, String entrypoint, Map<String, String> metadata, Resources resources, JsonNode request,
        long submittedAt) {
      this.id = id;
      this.request = request;
      this.submittedAt = submittedAt;
      this.entrypoint = entrypoint;
      this.metadata = Map.copyOf(metadata);
      this.resources = resources;
      this.message = PENDING_MESSAGE + (resources.reserves() ? PENDING_RESOURCES : "")
          + (resources.runtimeEnv().isEmpty() ? "" : PENDING_RUNTIME_ENV);
    }

    synchronized String driverJobId() {
      return driverJobId;
    }

    synchronized String status() {
      return status;
    }

    synchronized String logs() {
      return logs.toString();
    }

    synchronized void log(String line) {
      logs.append("[trinity-simulator] ").append(line).append('\n');
    }

    /** Moves a live job to a terminal state; false if it had already ended. */
    synchronized boolean finish(String terminal, String text, Integer exit) {
      if (!isLive(status)) {
        return false;
      }
      status = terminal;
      message = text;
      exitCode = exit;
      errorType = terminal.equals("FAILED") ? ENTRYPOINT_ERROR : null;
      endTime = System.currentTimeMillis();
      log("Job " + terminal + ": " + text);
      store.save(id, stored());
      return true;
    }

    synchronized RayJobStore.Stored stored() {
      return new RayJobStore.Stored(request, submittedAt, status, message, errorType, endTime, exitCode);
    }

    /** An ended job read back after a restart, as it ended. */
    synchronized void restore(RayJobStore.Stored ended) {
      status = ended.status();
      message = ended.message();
      errorType = ended.errorType();
      endTime = ended.endTime();
      exitCode = ended.exitCode();
      log("Job " + status + " before the simulator restarted: " + message);
    }

    /** The job as {@code GET /api/jobs/<id>} shows it (Ray's JobDetails fields). */
    synchronized ObjectNode toJson() {
      ObjectNode n = mapper.createObjectNode();
      n.put("type", "SUBMISSION");
      n.put("job_id", driverJobId);
      n.put("submission_id", id);
      if (driverJobId == null) {
        n.putNull("driver_info");
      } else {
        n.putObject("driver_info").put("id", driverJobId).put("node_ip_address", "127.0.0.1").put("pid", "0");
      }
      n.put("status", status);
      n.put("entrypoint", entrypoint);
      n.put("message", message);
      n.put("error_type", errorType);
      n.put("start_time", submittedAt);
      n.put("end_time", endTime);
      ObjectNode meta = n.putObject("metadata");
      metadata.forEach(meta::put);
      n.set("runtime_env", resources.runtimeEnv().deepCopy());
      n.putNull("driver_agent_http_address");
      n.putNull("driver_node_id");
      n.put("driver_exit_code", exitCode);
      resources.writeTo(n);
      return n;
    }
  }

  ArrayNode listJson() {
    ArrayNode all = mapper.createArrayNode();
    jobs().forEach(j -> all.add(j.toJson()));
    return all;
  }
}
