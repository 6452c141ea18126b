package io.otl.node.simulator;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.http.javadsl.Http;
import org.apache.pekko.http.javadsl.ServerBinding;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A SIMULATOR of Trinity-RFT's two HTTP faces — the Ray Jobs REST API that {@code trinity run} jobs
 * are submitted through, and the Trinity {@code serve} proxy — on one port, for the embedded default,
 * docker compose and tests (design §5). Jobs train nothing: they wait, then write a placeholder
 * checkpoint and an evaluation metrics file. Everything it answers is marked with the header {@code
 * X-Trinity-Simulator: true}, and it announces itself in the log at start.
 */
public final class TrinitySimulator {

  private static final Logger log = LoggerFactory.getLogger(TrinitySimulator.class);

  private final ServerBinding binding;
  private final RayJobsSimulation ray;
  private final SimulatorSettings settings;
  private final String baseModel;

  private TrinitySimulator(ServerBinding binding, RayJobsSimulation ray, SimulatorSettings settings, String baseModel) {
    this.binding = binding;
    this.ray = ray;
    this.settings = settings;
    this.baseModel = baseModel;
  }

  /** Binds the simulator and returns once it accepts connections; fails if the port is taken. */
  public static TrinitySimulator start(ActorSystem<?> system, SimulatorSettings settings) {
    return start(system, settings, DEFAULT_BASE_MODEL);
  }

  /**
   * Bodies it reads, at most. Like a model server it takes whole conversations, which pass the
   * node's API limit (pekko.http.server.parsing.max-content-length, 1 MiB, shared by every server
   * of the actor system it runs in) long before the gateway's own (gateway.max-body-bytes, 4 MiB).
   */
  static final long MAX_BODY_BYTES = 64L * 1024 * 1024;

  /** The model name the simulator serves when none is given (reference.conf's base-model). */
  public static final String DEFAULT_BASE_MODEL = "qwen2.5-7b-instruct";

  /**
   * As {@link #start(ActorSystem, SimulatorSettings)}; the model-server face serves {@code baseModel}
   * as its base model.
   */
  public static TrinitySimulator start(ActorSystem<?> system, SimulatorSettings settings, String baseModel) {
    // What this start creates, removed again if it cannot listen: a refused start left an empty
    // ./data/simulator behind (trial t175).
    Path created = firstMissing(settings.workDir());
    try {
      Files.createDirectories(settings.workDir());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create simulator work dir " + settings.workDir(), e);
    }
    ObjectMapper mapper = new ObjectMapper();
    RayJobsSimulation ray =
        new RayJobsSimulation(
            mapper, settings, system.scheduler(), system.dispatchers().lookup(DispatcherSelector.blocking()));
    ProxySimulation proxy = new ProxySimulation(mapper, settings.commitBatchSize());
    SimulatorRoutes routes = new SimulatorRoutes(mapper, ray, proxy, new ModelServerSimulation(mapper, baseModel));
    ServerBinding binding;
    try {
      binding =
          Http.get(system)
              .newServerAt(settings.host(), settings.port())
              .bind(org.apache.pekko.http.javadsl.server.Directives.withSizeLimit(MAX_BODY_BYTES, routes::route))
              .toCompletableFuture()
              .get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      removeEmptyFolders(created);
      throw new IllegalStateException(
          "Trinity simulator cannot bind " + settings.host() + ":" + settings.port() + ": " + e.getMessage(), e);
    }
    TrinitySimulator sim = new TrinitySimulator(binding, ray, settings, baseModel);
    log.warn(
        "*** TRINITY SIMULATOR *** listening on http://{}:{} (Ray Jobs API + Trinity proxy API). "
            + "This is NOT Trinity-RFT: jobs train nothing and write placeholder checkpoints where their config's "
            + "checkpoint_root_dir says; its own job records are under {} (pending {}, running {}).",
        settings.host(),
        sim.port(),
        settings.workDir().toAbsolutePath(),
        settings.pendingDuration(),
        settings.runningDuration());
    return sim;
  }

  /** The outermost folder of {@code dir}'s path that does not exist yet, or null. */
  static Path firstMissing(Path dir) {
    Path missing = null;
    for (Path p = dir.toAbsolutePath().normalize(); p != null && !Files.exists(p); p = p.getParent()) missing = p;
    return missing;
  }

  /** Deletes {@code top} if it holds folders only (nothing a start wrote is lost). */
  static void removeEmptyFolders(Path top) {
    if (top == null || !Files.isDirectory(top)) return;
    try (java.util.stream.Stream<Path> walk = Files.walk(top)) {
      List<Path> all = walk.sorted(java.util.Comparator.reverseOrder()).toList();
      if (all.stream().anyMatch(p -> !Files.isDirectory(p))) return;
      for (Path p : all) Files.deleteIfExists(p);
    } catch (IOException e) {
      log.debug("left {} after a failed start: {}", top, e.getMessage());
    }
  }

  /** The bound port (the real one when settings asked for 0). */
  public int port() {
    return binding.localAddress().getPort();
  }

  /** {@code http://<host>:<port>}, usable as both trinity endpoints. */
  public String baseUrl() {
    String host = settings.host().equals("0.0.0.0") ? "127.0.0.1" : settings.host();
    return "http://" + host + ":" + port();
  }

  /** The base model name of the model-server face. */
  public String baseModel() {
    return baseModel;
  }

  /** The OpenAI base URL of the model-server face ({@code http://host:port/v1}). */
  public String modelServerUrl() {
    return baseUrl() + "/v1";
  }

  /**
   * Test hook (also {@code POST /simulator/jobs/<id>/quality}): what job {@code jobId}'s checkpoint
   * scores, in its eval_metrics.json and in any later bench. Set before the job completes.
   */
  public void setQuality(String jobId, java.util.Map<String, Double> metrics) {
    ray.setQuality(jobId, metrics);
  }

  /**
   * Stands in for a real Trinity bench: given the run's folder, the candidate's {@code
   * global_step_N}, the eval set and the converter command chained after the bench ({@code
   * python3 <script> …}), it writes Trinity's monitor output and runs the converter.
   */
  @FunctionalInterface
  public interface RealBench {
    void run(java.nio.file.Path jobDir, java.nio.file.Path candidateStep, java.nio.file.Path evalFile,
        java.util.List<String> converter) throws Exception;
  }

  /**
   * Test hook: benches of jobs that chain a converter are done by {@code hook} (null: the simulator
   * writes bench_scores.json itself, from the checkpoints' quality).
   */
  public void setRealBench(RealBench hook) {
    ray.setRealBench(hook);
  }

  public SimulatorSettings settings() {
    return settings;
  }

  /** Stops accepting requests, lets in-flight ones finish (up to 3 s) and stops the job timers. */
  public void stop() {
    ray.shutdown();
    try {
      binding.terminate(Duration.ofSeconds(3)).toCompletableFuture().get(5, TimeUnit.SECONDS);
    } catch (Exception e) {
      log.warn("Trinity simulator did not stop cleanly: {}", e.toString());
    }
    log.info("Trinity simulator on port {} stopped", port());
  }
}
