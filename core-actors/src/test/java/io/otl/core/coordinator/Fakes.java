package io.otl.core.coordinator;

import io.otl.core.training.BackendJobStatus;
import io.otl.core.training.BackendSubmission;
import io.otl.core.training.OnlineTrainingBackend;
import io.otl.core.training.ProxyMetrics;
import io.otl.core.training.TrainingBackend;
import io.otl.core.training.TrainingBackendException;
import io.otl.core.training.TrainingJobSpec;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * In-memory fakes of the coordinator's ports. The real implementations are tested over real HTTP
 * and JDBC in their own modules; here only the coordinator's use of the contracts is under test.
 * Each fake records its calls and can be told to fail or to hold a call open (a future the test
 * completes, or never: a crash in the middle of a call).
 */
final class Fakes {
  private Fakes() {}

  static TrainingBackendException unavailable() {
    return new TrainingBackendException(TrainingBackendException.Kind.UNAVAILABLE, 503, "backend unavailable", null);
  }

  static TrainingBackendException rejected() {
    return new TrainingBackendException(TrainingBackendException.Kind.REJECTED, 400, "bad request", null);
  }

  /** A queue of scripted answers; when empty, the default answer. */
  static final class Script<T> {
    private final Deque<Supplier<CompletionStage<T>>> next = new ArrayDeque<>();
    private final Supplier<CompletionStage<T>> fallback;

    Script(Supplier<CompletionStage<T>> fallback) {
      this.fallback = fallback;
    }

    synchronized void then(Supplier<CompletionStage<T>> answer) {
      next.add(answer);
    }

    synchronized CompletionStage<T> answer() {
      Supplier<CompletionStage<T>> s = next.poll();
      return (s == null ? fallback : s).get();
    }
  }

  static <T> Supplier<CompletionStage<T>> failWith(RuntimeException e) {
    return () -> CompletableFuture.failedFuture(e);
  }

  static <T> Supplier<CompletionStage<T>> hang() {
    return CompletableFuture::new;
  }

  static <T> Supplier<CompletionStage<T>> held(CompletableFuture<T> f) {
    return () -> f;
  }

  static final class Exporter implements DatasetExporter {
    final List<ExportRequest> requests = Collections.synchronizedList(new ArrayList<>());
    volatile List<String> piiFindings = List.of();
    final Script<DatasetManifest> script = new Script<>(() -> null);

    @Override
    public CompletionStage<DatasetManifest> export(ExportRequest r) {
      requests.add(r);
      CompletionStage<DatasetManifest> scripted = script.answer();
      if (scripted != null) {
        return scripted;
      }
      return CompletableFuture.completedFuture(manifestFor(r, piiFindings));
    }

    static DatasetManifest manifestFor(ExportRequest r, List<String> pii) {
      return new DatasetManifest("/datasets/" + r.agentId() + "/" + r.jobId() + ".jsonl", r.sessionIds().size(),
          "sha-" + Integer.toHexString(r.sessionIds().hashCode()), r.sessionIds(), pii, r.algorithm());
    }
  }

  static final class Backend implements TrainingBackend {
    final List<TrainingJobSpec> submissions = Collections.synchronizedList(new ArrayList<>());
    final List<String> cancels = Collections.synchronizedList(new ArrayList<>());
    final List<String> polls = Collections.synchronizedList(new ArrayList<>());
    final Map<String, BackendJobStatus> statuses = new ConcurrentHashMap<>();
    final Script<BackendSubmission> submit = new Script<>(() -> null);
    final Script<Void> cancel = new Script<>(() -> CompletableFuture.completedFuture(null));

    @Override
    public CompletionStage<BackendSubmission> submit(TrainingJobSpec spec) {
      submissions.add(spec);
      CompletionStage<BackendSubmission> scripted = submit.answer();
      if (scripted != null) {
        return scripted;
      }
      statuses.putIfAbsent(spec.jobId(), new BackendJobStatus(BackendJobStatus.State.PENDING, "", null));
      return CompletableFuture.completedFuture(new BackendSubmission("raysubmit_" + spec.jobId()));
    }

    @Override
    public CompletionStage<BackendJobStatus> status(String jobId) {
      polls.add(jobId);
      BackendJobStatus s = statuses.get(jobId);
      if (s == null) {
        return CompletableFuture.failedFuture(new TrainingBackendException(
            TrainingBackendException.Kind.NOT_FOUND, 404, "no job " + jobId, null));
      }
      return CompletableFuture.completedFuture(s);
    }

    @Override
    public CompletionStage<Void> cancel(String jobId) {
      cancels.add(jobId);
      // As on Ray: a stop it takes ({"stopped": true}) turns a live job STOPPED, which polling reads.
      return cancel.answer().thenRun(() -> statuses.computeIfPresent(jobId, (id, st) ->
          st.state() == BackendJobStatus.State.PENDING || st.state() == BackendJobStatus.State.RUNNING
              ? new BackendJobStatus(BackendJobStatus.State.STOPPED, "Job was intentionally stopped.", null) : st));
    }

    @Override
    public CompletionStage<String> logs(String jobId) {
      return CompletableFuture.completedFuture("");
    }

    @Override
    public String type() {
      return "ray-jobs";
    }
  }

  record Registration(String agentId, String version, String artifact, String endpoint, String sourceJobId,
      Map<String, Double> metrics) {}

  static final class Sink implements CandidateSink {
    final List<Registration> calls = Collections.synchronizedList(new ArrayList<>());
    /** Each registered version's {@code trainedFrom}, as handed over. */
    final Map<String, String> trainedFrom = new java.util.concurrent.ConcurrentHashMap<>();
    final Script<Void> script = new Script<>(() -> CompletableFuture.completedFuture(null));

    @Override
    public CompletionStage<Void> register(String agentId, String version, String artifact, String endpoint,
        String sourceJobId, Map<String, Double> metrics, String trainedFrom) {
      if (trainedFrom != null) this.trainedFrom.put(version, trainedFrom);
      calls.add(new Registration(agentId, version, artifact, endpoint, sourceJobId, Map.copyOf(metrics)));
      return script.answer();
    }
  }

  record Forward(List<String> msgIds, double reward, String taskId, int runId) {}

  static final class Online implements OnlineTrainingBackend {
    final List<Forward> forwards = Collections.synchronizedList(new ArrayList<>());
    final List<Integer> commits = Collections.synchronizedList(new ArrayList<>());
    final Script<Void> forward = new Script<>(() -> CompletableFuture.completedFuture(null));
    volatile ProxyMetrics metrics = new ProxyMetrics(Map.of(0, 0), 0, 0, 0);

    @Override
    public CompletionStage<Void> forwardReward(List<String> msgIds, double reward, String taskId, int runId) {
      forwards.add(new Forward(List.copyOf(msgIds), reward, taskId, runId));
      return forward.answer();
    }

    @Override
    public CompletionStage<Void> commit() {
      commits.add(commits.size() + 1);
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public CompletionStage<ProxyMetrics> metrics() {
      return CompletableFuture.completedFuture(metrics);
    }

    @Override
    public CompletionStage<Boolean> health() {
      return CompletableFuture.completedFuture(true);
    }

    @Override
    public String type() {
      return "trinity-proxy";
    }
  }
}
