package io.otl.node.training;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.TestDatabases;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;

/**
 * What the training-loop tests share: a Trinity simulator in an actor system of its own (jobs
 * pending 200 ms, running 1 s), a work folder for it, and the settings of a node on PostgreSQL that
 * trains against it with the threshold trigger.
 */
final class SimulatedTrinity implements AutoCloseable {
  final Path work;
  final TrinitySimulator simulator;
  private final ActorTestKit system;

  private SimulatedTrinity(Path work, ActorTestKit system, TrinitySimulator simulator) {
    this.work = work;
    this.system = system;
    this.simulator = simulator;
  }

  static SimulatedTrinity start(String workPrefix) throws IOException {
    Path work = Files.createTempDirectory(workPrefix);
    ActorTestKit system = ActorTestKit.create("simulator");
    TrinitySimulator simulator = TrinitySimulator.start(system.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(work.resolve("simulator")).withDurations(Duration.ofMillis(200), Duration.ofSeconds(1)));
    return new SimulatedTrinity(work, system, simulator);
  }

  /** A node that trains once {@code minSamples} trajectories are pooled; {@code more} keys win over these. */
  Config node(int minSamples, Map<String, Object> more) {
    Map<String, Object> keys = new HashMap<>(Map.of(
        "agentscope.training.training-runner.trinity-endpoint", simulator.baseUrl(),
        "agentscope.training.training-runner.trigger.type", "threshold",
        "agentscope.training.training-runner.trigger.min-samples", minSamples,
        "agentscope.training.training-runner.poll-interval", "200ms",
        "agentscope.training.training-runner.dataset-dir", work.resolve("datasets").toString(),
        "agentscope.training.training-runner.checkpoint-root-dir", work.resolve("checkpoints").toString(),
        "agentscope.training.read-side.rescan-interval", "2s"));
    keys.putAll(more);
    return ConfigFactory.parseMap(keys).withFallback(TestDatabases.node(TestDatabases.postgres(), true));
  }

  @Override
  public void close() {
    simulator.stop();
    system.shutdownTestKit();
  }
}
