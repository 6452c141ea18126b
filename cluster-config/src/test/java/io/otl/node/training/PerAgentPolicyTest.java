package io.otl.node.training;

import static io.otl.node.training.TrainingLoopTest.completeSession;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.node.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * agentscope.training.agents.<agentId> through a real node (H2, Trinity simulator over loopback):
 * the agent with overrides trains at its own min-samples from its own base model; the others keep
 * the node's policy.
 */
class PerAgentPolicyTest {

  @Test
  void anAgentsStaticOverridesDriveItsTriggerAndBaseModel() throws Exception {
    Path work = TestDatabases.outputDir("per-agent");
    ActorTestKit kit = ActorTestKit.create("per-agent-simulator");
    TrinitySimulator simulator = TrinitySimulator.start(kit.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(work.resolve("simulator")).withDurations(Duration.ofMillis(100), Duration.ofMillis(300)));
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.trinity-endpoint", simulator.baseUrl(),
            "agentscope.training.training-runner.trigger.type", "threshold",
            "agentscope.training.training-runner.trigger.min-samples", 1000,
            "agentscope.training.training-runner.poll-interval", "200ms",
            "agentscope.training.read-side.rescan-interval", "1s",
            "agentscope.training.agents.eager-agent.trigger.min-samples", 2,
            "agentscope.training.agents.eager-agent.base-model", "tiny-eager-model"))
        .withFallback(TestDatabases.node(TestDatabases.h2(work), true)))) {
      Http http = new Http(node.httpPort());
      for (int i = 0; i < 2; i++) {
        completeSession(http, "eager-agent", "eager-s" + i, i);
        completeSession(http, "plain-agent", "plain-s" + i, i);
      }
      JsonNode job = Await.until("the eager agent's job", () -> {
        Http.Response r = http.get("/v1/jobs?agentId=eager-agent");
        return r.status() != 200 || r.json().get("jobs").isEmpty() ? null : r.json().get("jobs").get(0);
      }, j -> j.get("status").asText().equals("SUCCEEDED"));
      assertEquals("tiny-eager-model", job.get("baseModel").asText(), job.toString());
      assertEquals(2, http.get("/v1/training/eager-agent").json().get("minSamples").asInt());

      JsonNode plain = Await.until("the plain agent's pool", () -> {
        Http.Response r = http.get("/v1/training/plain-agent");
        return r.status() == 200 ? r.json() : null;
      }, t -> t.get("poolSize").asInt() == 2);
      assertEquals(1000, plain.get("minSamples").asInt());
      assertEquals(0, http.get("/v1/jobs?agentId=plain-agent").json().get("jobs").size());
    } finally {
      simulator.stop();
      kit.shutdownTestKit();
    }
  }
}
