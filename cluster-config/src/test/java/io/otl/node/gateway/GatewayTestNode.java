package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
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
import java.util.function.Function;
import java.util.function.Predicate;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;

/**
 * What the gateway tests stand on: a node with its gateway on a new H2 journal, a Trinity simulator
 * as the model server, and the agents it serves. One test class, one of these, closed in its
 * {@code @AfterAll} (or a try-with-resources around its one test).
 */
final class GatewayTestNode implements AutoCloseable {
  /** The test's folder under {@code target/}: the journal, the simulator's work, the test's own files. */
  final Path dir;
  final TrainingNode node;
  final TrinitySimulator simulator;
  /** The node's API, with the node's token when the settings set {@code auth.token}. */
  final Http api;
  private final ActorTestKit simulatorKit;
  private final Config nodeConfig;

  private GatewayTestNode(Path dir, ActorTestKit simulatorKit, TrinitySimulator simulator, TrainingNode node,
      Http api, Config nodeConfig) {
    this.dir = dir;
    this.simulatorKit = simulatorKit;
    this.simulator = simulator;
    this.node = node;
    this.api = api;
    this.nodeConfig = nodeConfig;
  }

  /**
   * The node stopped and started again on the same journal and simulator, as after a crash or an
   * upgrade: its gateway remembers nothing of the sessions it served. Close the returned one, not this.
   */
  GatewayTestNode restarted() {
    node.close();
    TrainingNode again = TrainingNode.start(nodeConfig);
    Http http = new Http(again.httpPort());
    String token = "agentscope.training.auth.token";
    return new GatewayTestNode(dir, simulatorKit, simulator, again,
        nodeConfig.hasPath(token) ? http.withToken(nodeConfig.getString(token)) : http, nodeConfig);
  }

  /**
   * As {@link #restarted()}, with {@code settings} laid over the node's configuration: an operator's
   * change of the config file applied by a restart.
   */
  GatewayTestNode restartedWith(Map<String, ?> settings) {
    node.close();
    Config changed = ConfigFactory.parseMap(settings).withFallback(nodeConfig);
    TrainingNode again = TrainingNode.start(changed);
    return new GatewayTestNode(dir, simulatorKit, simulator, again, new Http(again.httpPort()), changed);
  }

  /**
   * @param name names the node's folder under {@code target/}
   * @param settings node settings over the test defaults ({@link TestDatabases#node})
   */
  static GatewayTestNode start(String name, Map<String, ?> settings) throws IOException {
    return start(name, simulator -> settings);
  }

  /**
   * For settings that name the simulator (its URL as the vLLM server or as Trinity's proxy): the
   * simulator starts first, on an actor system of its own, and the node after it.
   *
   * @param name names the node's folder under {@code target/}
   * @param settings node settings over the test defaults ({@link TestDatabases#node}), given the simulator
   */
  static GatewayTestNode start(String name, Function<TrinitySimulator, Map<String, ?>> settings)
      throws IOException {
    Path dir = Files.createDirectories(Path.of("target", name + "-" + UUID.randomUUID()).toAbsolutePath());
    ActorTestKit kit = ActorTestKit.create(name + "-simulator");
    TrinitySimulator simulator;
    TrainingNode node;
    Map<String, ?> nodeSettings;
    try {
      simulator = TrinitySimulator.start(kit.system(),
          SimulatorSettings.defaults().withPort(0).withWorkDir(dir.resolve("simulator")));
    } catch (RuntimeException e) {
      kit.shutdownTestKit();
      throw e;
    }
    Config config;
    try {
      nodeSettings = settings.apply(simulator);
      config = ConfigFactory.parseMap(nodeSettings).withFallback(TestDatabases.node(TestDatabases.h2(dir), true));
      node = TrainingNode.start(config);
    } catch (RuntimeException e) {
      simulator.stop();
      kit.shutdownTestKit();
      throw e;
    }
    Object token = nodeSettings.get("agentscope.training.auth.token");
    Http api = new Http(node.httpPort());
    return new GatewayTestNode(dir, kit, simulator, node, token == null ? api : api.withToken(token.toString()),
        config);
  }

  /** Registers v1 of each agent with the simulator as its endpoint, and waits until it is STABLE. */
  GatewayTestNode serving(String... agents) throws InterruptedException {
    for (String agent : agents) servingAt(agent, simulator.baseUrl() + "/v1");
    return this;
  }

  /** Registers v1 of the agent with {@code endpoint} (an OpenAI base URL), and waits until it is STABLE. */
  GatewayTestNode servingAt(String agent, String endpoint) throws InterruptedException {
    String body = "{\"version\":\"v1\",\"artifact\":\"file:///models/v1\",\"endpoint\":\"" + endpoint + "\"}";
    Http.Response r = api.post("/v1/models/" + agent + "/versions", body);
    // A 503 says "retry the request", as a client should: a node started with a short
    // request-timeout (GatewaySlowAnswerTest: 1 s) can take longer than that for an agent's first
    // registration on a loaded machine. The registration is idempotent.
    boolean retried = false;
    for (int i = 0; i < 10 && r.status() == 503; i++, retried = true) {
      Thread.sleep(500);
      r = api.post("/v1/models/" + agent + "/versions", body);
    }
    // after a retry, a 409 (or 200) says the timed-out attempt landed after all
    assertTrue(r.status() == 201 || retried && (r.status() == 409 || r.status() == 200), r.body());
    awaitState(agent, "v1", "STABLE");
    return this;
  }

  /** The state of one version of the agent ({@code CANARY}, {@code STABLE}, …); empty when it has none. */
  String stateOf(String agent, String version) {
    for (JsonNode v : api.get("/v1/models/" + agent).json().path("versions")) {
      if (v.path("version").asText().equals(version)) return v.path("state").asText();
    }
    return "";
  }

  /** Waits until the version is in {@code state}; fails naming the agent's versions if it never is. */
  void awaitState(String agent, String version, String state) throws InterruptedException {
    for (int i = 0; i < 200; i++) {
      if (stateOf(agent, version).equals(state)) return;
      Thread.sleep(100);
    }
    assertEquals(state, stateOf(agent, version), api.get("/v1/models/" + agent).body());
  }

  /** The calls the simulator has answered, to tell whether the gateway forwarded one. */
  long simulatorRequests() {
    return new Http(simulator.port()).get("/metrics").json().path("rollout/model_0/total_request_count").asLong();
  }

  /**
   * The session as {@code GET /v1/sessions/{id}} answers it once {@code ready} holds: the gateway records a
   * turn just after its answer, so a test reads it when it is there (up to 15 s on a loaded machine).
   */
  JsonNode awaitSession(String id, Predicate<JsonNode> ready) throws InterruptedException {
    JsonNode last = null;
    for (int i = 0; i < 150; i++) {
      Http.Response r = api.get("/v1/sessions/" + id);
      if (r.status() == 200) {
        last = r.json();
        if (ready.test(last)) return last;
      }
      Thread.sleep(100);
    }
    throw new AssertionError("session " + id + " never reached the expected state; last: " + last);
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + node.httpPort() + path);
  }

  @Override
  public void close() {
    node.close();
    simulator.stop();
    simulatorKit.shutdownTestKit();
  }
}
