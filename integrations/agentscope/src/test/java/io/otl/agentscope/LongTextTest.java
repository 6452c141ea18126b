package io.otl.agentscope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.agentscope.core.ReActAgent;
import io.agentscope.core.memory.InMemoryMemory;
import io.agentscope.core.message.Msg;
import io.agentscope.core.message.MsgRole;
import io.agentscope.core.model.OpenAIChatModel;
import io.agentscope.core.tool.Toolkit;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A tool whose result is longer than the node's {@code data-collector.max-text-length} (a fetched web page,
 * a file read whole). The events API refuses such a text (400), and the hook, whose agent already has the
 * result, cannot send it again shorter: the tool call was dropped, and the trajectory's answer rested on a
 * call it did not hold (trial t80). The gateway and the OpenTelemetry door store such texts cut at the
 * limit; so does the hook now, desensitized before the cut.
 */
class LongTextTest {
  private static TrainingNode node;
  private static TrinitySimulator simulator;

  @BeforeAll
  static void start() throws Exception {
    Path dir = TestNode.dir("agentscope-long");
    node = TestNode.start(dir);
    simulator = TrinitySimulator.start(node.system(),
        SimulatorSettings.defaults().withPort(0).withWorkDir(dir.resolve("simulator-face")));
  }

  @AfterAll
  static void stop() {
    if (simulator != null) simulator.stop();
    if (node != null) node.close();
  }

  @Test
  void aToolResultOverTheNodesTextLimitIsStoredCutNotDropped() throws Exception {
    Toolkit toolkit = new Toolkit();
    toolkit.registerTool(new LongPageTools());
    ReActAgent agent = ReActAgent.builder().name("page-reader").sysPrompt("You read pages.")
        .model(OpenAIChatModel.builder().baseUrl(simulator.baseUrl() + "/v1").apiKey("unused").modelName("default")
            .stream(false).build())
        .toolkit(toolkit).memory(new InMemoryMemory()).build();
    String sessionId = "as-long-" + agent.getAgentId();
    OtlTrainingHook training = OtlTraining.builder(TrajectorySink.http("http://127.0.0.1:" + node.httpPort()))
        .sessionIds(SessionIdProvider.fixed(sessionId)).attach(agent);
    Msg reply = agent.call(Msg.builder().role(MsgRole.USER).textContent("Use the tool: read example.org").build()).block();
    assertFalse(reply.getTextContent().isBlank());
    assertTrue(training.flush(Duration.ofSeconds(30)));
    assertEquals(0, training.dropped(), "nothing is dropped for being long");
    JsonNode s = TestNode.session(node, sessionId, n -> n.path("messages").size() >= 3);
    assertEquals(1, s.path("toolCalls").size(), "the long result's call is stored: " + s.path("toolCalls"));
    JsonNode call = s.path("toolCalls").get(0);
    String output = call.path("output").asText();
    assertTrue(output.length() > 65000 && output.length() <= 65536, "cut at the node's limit: " + output.length());
    assertTrue(output.startsWith("Contact: [EMAIL]. lorem ipsum"), output.substring(0, 40));
    training.close();
  }
}
