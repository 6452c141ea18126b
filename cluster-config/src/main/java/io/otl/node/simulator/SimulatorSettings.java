package io.otl.node.simulator;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * Settings of the {@link TrinitySimulator}.
 *
 * @param host interface to bind ({@code 0.0.0.0} in containers)
 * @param port port of both simulated APIs (Ray Jobs and Trinity proxy); 0 picks a free one
 * @param workDir where relative {@code checkpoint_root_dir}s resolve
 * @param pendingDuration how long a job stays PENDING
 * @param runningDuration how long a job stays RUNNING before it succeeds (or fails on request)
 * @param commitBatchSize rewarded experiences a {@code POST /commit} needs to train a new model
 *     version
 */
public record SimulatorSettings(
    String host,
    int port,
    Path workDir,
    Duration pendingDuration,
    Duration runningDuration,
    int commitBatchSize) {

  public SimulatorSettings {
    Objects.requireNonNull(host, "host");
    Objects.requireNonNull(workDir, "workDir");
    Objects.requireNonNull(pendingDuration, "pendingDuration");
    Objects.requireNonNull(runningDuration, "runningDuration");
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("port must be 0..65535, was " + port);
    }
    if (pendingDuration.isNegative() || runningDuration.isNegative()) {
      throw new IllegalArgumentException("durations must not be negative");
    }
    if (commitBatchSize < 1) {
      throw new IllegalArgumentException("commitBatchSize must be >= 1, was " + commitBatchSize);
    }
  }

  /** From {@code agentscope.training.simulator} (the embedded default starts it with the node). */
  public static SimulatorSettings fromConfig(com.typesafe.config.Config c) {
    return new SimulatorSettings(c.getString("host"), c.getInt("port"), Path.of(c.getString("work-dir")),
        c.getDuration("pending"), c.getDuration("running"), c.getInt("commit-batch"));
  }

  /** Ray's default dashboard port, ./data/simulator, 1 s pending, 5 s running, commit after 1. */
  public static SimulatorSettings defaults() {
    return new SimulatorSettings(
        "127.0.0.1", 8265, Path.of("data", "simulator"), Duration.ofSeconds(1), Duration.ofSeconds(5), 1);
  }

  public SimulatorSettings withHost(String h) {
    return new SimulatorSettings(h, port, workDir, pendingDuration, runningDuration, commitBatchSize);
  }

  public SimulatorSettings withPort(int p) {
    return new SimulatorSettings(host, p, workDir, pendingDuration, runningDuration, commitBatchSize);
  }

  public SimulatorSettings withWorkDir(Path dir) {
    return new SimulatorSettings(host, port, dir, pendingDuration, runningDuration, commitBatchSize);
  }

  public SimulatorSettings withDurations(Duration pending, Duration running) {
    return new SimulatorSettings(host, port, workDir, pending, running, commitBatchSize);
  }

  public SimulatorSettings withCommitBatchSize(int n) {
    return new SimulatorSettings(host, port, workDir, pendingDuration, runningDuration, n);
  }
}
