package io.otl.agentscope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.agentscope.core.ReActAgent;
import io.agentscope.core.memory.InMemoryMemory;
import io.agentscope.core.message.Msg;
import io.agentscope.core.message.MsgRole;
import io.agentscope.core.model.OpenAIChatModel;
import io.agentscope.core.tool.Toolkit;
import io.otl.core.session.SessionSampler;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * On a node with {@code collect-mode = sampled}, a session its sampling drops is acknowledged
 * ({@code "sampled": false}) and nothing of it is stored. The hook counted those events as delivered,
 * so an agent's metrics said its conversations were recorded while the node held none of them.
 */
class SampledSessionsTest {
  private static TrainingNode node;
  private static TrinitySimulator simulator;

  @BeforeAll
  static void start() throws Exception {
    Path dir = TestNode.dir("agentscope-sampled");
    node = TestNode.start(dir, ConfigFactory.parseMap(Map.of(
        "agentscope.training.data-collector.collect-mode", "sampled",
        "agentscope.training.data-collector.sample-rate", 0.5)));
    simulator = TrinitySimulator.start(node.system(),
        SimulatorSettings.defaults().withPort(0).withWorkDir(dir.resolve("simulator-face")));
  }

  @AfterAll
  static void stop() {
    if (simulator != null) simulator.stop();
    if (node != null) node.close();
  }

  @Test
  void aSessionTheNodesSamplingDropsIsCountedAsNotSampledNotAsDelivered() throws Exception {
    for (Function<TrainingNode, TrajectorySink> door : java.util.List.<Function<TrainingNode, TrajectorySink>>of(
        n -> TrajectorySink.http("http://127.0.0.1:" + n.httpPort()), n -> TrajectorySink.embedded(n.dataCollector()))) {
      TrajectorySink sink = door.apply(node);
      String dropped = sessionId(false);
      OtlTrainingHook training = run(sink, dropped);
      assertEquals(0, training.delivered(), "the node kept nothing of session " + dropped);
      assertTrue(training.notSampled() > 0, "the events the node's sampling dropped are counted");
      assertEquals(0, training.dropped(), "nothing was refused or lost on the way");
      assertEquals(404, HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + node.httpPort() + "/v1/sessions/" + dropped)).build(),
          HttpResponse.BodyHandlers.ofString()).statusCode(), "the node holds no session " + dropped);
      training.close();

      String kept = sessionId(true);
      training = run(sink, kept);
      assertEquals(0, training.notSampled(), "session " + kept + " is one the node keeps");
      assertTrue(training.delivered() > 0);
      JsonNode s = TestNode.session(node, kept, n -> n.path("messages").size() >= 3);
      assertEquals("system", s.path("messages").get(0).path("role").asText(), s.toString());
      training.close();
    }
  }

  private static OtlTrainingHook run(TrajectorySink sink, String sessionId) throws InterruptedException {
    Toolkit toolkit = new Toolkit();
    toolkit.registerTool(new OrderTools());
    ReActAgent agent = ReActAgent.builder().name("sampled-bot").sysPrompt("You are a support agent.")
        .model(OpenAIChatModel.builder().baseUrl(simulator.baseUrl() + "/v1").apiKey("unused").modelName("default")
            .stream(false).build())
        .toolkit(toolkit).memory(new InMemoryMemory()).build();
    OtlTrainingHook training = OtlTraining.builder(sink).sessionIds(SessionIdProvider.fixed(sessionId)).attach(agent);
    assertFalse(agent.call(Msg.builder().role(MsgRole.USER).textContent("Where is order 4711?").build()).block()
        .getTextContent().isBlank());
    training.thumbs(agent, true);
    assertTrue(training.flush(Duration.ofSeconds(30)), "the hook's buffer drains");
    return training;
  }

  /** A new session id that the node's sampling (rate 0.5) keeps, or drops. */
  private static String sessionId(boolean kept) {
    SessionSampler sampler = new SessionSampler("sampled", 0.5);
    while (true) {
      String id = "sampled-" + java.util.UUID.randomUUID();
      if (sampler.keep(id) == kept) return id;
    }
  }
}
