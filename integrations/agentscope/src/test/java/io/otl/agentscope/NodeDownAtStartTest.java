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
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;

/**
 * A node that is down when the agent starts, then comes up: the first turn is lost (dropped after
 * its retries, as the doc says), but the session's start, system prompt and tool list, sent once
 * and dropped with it, were never sent again. The node stored the later turns without them, and the
 * session's SFT line had neither prompt nor tools.
 */
class NodeDownAtStartTest {
  @Test
  void theSystemPromptAndToolsDroppedWithTheFirstTurnGoWithTheNext() throws Exception {
    Path dir = TestNode.dir("agentscope-down-at-start");
    // The model lives apart from the node, so the agent answers while the node is down.
    ActorSystem<Void> modelSystem = ActorSystem.create(Behaviors.empty(), "model-face",
        ConfigFactory.parseMap(Map.of("pekko.actor.provider", "local")).withFallback(ConfigFactory.load()));
    TrinitySimulator model = TrinitySimulator.start(modelSystem,
        SimulatorSettings.defaults().withPort(0).withWorkDir(dir.resolve("model")));
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Toolkit toolkit = new Toolkit();
    toolkit.registerTool(new OrderTools());
    ReActAgent agent = ReActAgent.builder().name("late-node-bot").sysPrompt("You are a support agent.")
        .model(OpenAIChatModel.builder().baseUrl(model.baseUrl() + "/v1").apiKey("unused").modelName("default")
            .stream(false).build())
        .toolkit(toolkit).memory(new InMemoryMemory()).build();
    OtlTrainingHook training = OtlTraining.builder(TrajectorySink.http("http://127.0.0.1:" + port))
        .retries(2, Duration.ofMillis(10)).attach(agent);
    try {
      ask(agent, "Use the tool: where is order 4711?");
      assertTrue(training.flush(Duration.ofSeconds(30)));
      assertEquals(0, training.delivered(), "the node is down");
      assertTrue(training.dropped() > 0, "the first turn is dropped and counted");

      try (TrainingNode node = TestNode.start(dir.resolve("node"),
          ConfigFactory.parseMap(Map.of("agentscope.training.http.port", port)))) {
        ask(agent, "Use the tool: and order 4712?");
        assertTrue(training.flush(Duration.ofSeconds(30)));
        JsonNode s = TestNode.session(node, agent.getAgentId(), n -> n.path("messages").size() >= 3);
        JsonNode first = s.path("messages").get(0);
        assertEquals("system", first.path("role").asText(), "the prompt, first: " + s);
        assertEquals("You are a support agent.", first.path("content").asText());
        assertEquals("user", s.path("messages").get(1).path("role").asText(), s.toString());
        assertEquals(3, s.path("messages").size(), "the prompt and the second turn: " + s);
        assertTrue(s.path("metadata").path("tools").asText().contains("lookup_order"), "the tool list: " + s);
        assertEquals("agentscope", s.path("metadata").path("source").asText(), "the start: " + s);
        assertEquals("late-node-bot", s.path("metadata").path("agentName").asText(), s.toString());

        // Sent once more, not with every turn.
        long before = training.delivered();
        ask(agent, "Thanks, that is all.");
        assertTrue(training.flush(Duration.ofSeconds(30)));
        JsonNode after = TestNode.session(node, agent.getAgentId(), n -> n.path("messages").size() >= 5);
        assertEquals(5, after.path("messages").size(), after.toString());
        assertEquals(2, training.delivered() - before, "a plain turn: its user message and reply");
      }
    } finally {
      training.close();
      model.stop();
      modelSystem.terminate();
    }
  }

  private static void ask(ReActAgent agent, String text) {
    Msg reply = agent.call(Msg.builder().role(MsgRole.USER).textContent(text).build()).block();
    assertFalse(reply == null || reply.getTextContent().isBlank(), "the agent answers");
  }
}
