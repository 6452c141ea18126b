package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;

/**
 * What the gateway tests stand on: a node with its gateway on a new H2 journal, a Trinity simulator
 * (on the node's actor system) as the model server, and the agents it serves. One test class, one
 * of these, closed in its {@code @AfterAll}.
 */
final class GatewayTestNode implements AutoCloseable {
  final TrainingNode node;
  final TrinitySimulator simulator;
  /** The node's API, with the node's token when the settings set {@code auth.token}. */
  final Http api;

  private GatewayTestNode(TrainingNode node, TrinitySimulator simulator, Http api) {
    this.node = node;
    this.simulator = simulator;
    this.api = api;
  }

  /**
   * @param name names the node's folder under {@code target/}
   * @param settings node settings over the test defaults ({@link TestDatabases#node})
   */
  static GatewayTestNode start(String name, Map<String, ?> settings) throws IOException {
    Path dir = Files.createDirectories(Path.of("target", name + "-" + UUID.randomUUID()));
    TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(settings)
        .withFallback(TestDatabases.node(TestDatabases.h2(dir), true)));
    TrinitySimulator simulator = TrinitySimulator.start(node.system(),
        SimulatorSettings.defaults().withPort(0).withWorkDir(dir.resolve("simulator")));
    Object token = settings.get("agentscope.training.auth.token");
    Http api = new Http(node.httpPort());
    return new GatewayTestNode(node, simulator, token == null ? api : api.withToken(token.toString()));
  }

  /** Registers v1 of each agent with the simulator as its endpoint, and waits until it is STABLE. */
  GatewayTestNode serving(String... agents) throws InterruptedException {
    for (String agent : agents) {
      Http.Response r = api.post("/v1/models/" + agent + "/versions",
          "{\"version\":\"v1\",\"artifact\":\"file:///models/v1\",\"endpoint\":\"" + simulator.baseUrl() + "/v1\"}");
      assertEquals(201, r.status(), r.body());
      awaitStable(agent);
    }
    return this;
  }

  private void awaitStable(String agent) throws InterruptedException {
    for (int i = 0; i < 100; i++) {
      if (api.get("/v1/models/" + agent).body().contains("\"STABLE\"")) return;
      Thread.sleep(100);
    }
    throw new AssertionError("v1 of " + agent + " never became STABLE: " + api.get("/v1/models/" + agent).body());
  }

  /** The calls the simulator has answered, to tell whether the gateway forwarded one. */
  long simulatorRequests() {
    return new Http(simulator.port()).get("/metrics").json().path("rollout/model_0/total_request_count").asLong();
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + node.httpPort() + path);
  }

  @Override
  public void close() {
    simulator.stop();
    node.close();
  }
}
