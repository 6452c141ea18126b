package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/**
 * A policy PUT sets a rollout part (ModelVersion) and a training part (the coordinator). PUTs of one
 * agent sent together must leave one PUT's body in force, both parts of it: a new-user trial found
 * the rollout keys of one PUT beside the training keys of another.
 */
class PolicyPutsInTurnTest {
  private static final String AGENT = "turns";

  @Test
  void concurrentPutsLeaveBothPartsOfOneBody() throws Exception {
    var settings = ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.trigger.min-samples", 1000,
            "agentscope.training.model-update.steps", List.of(0.5, 1.0)))
        .withFallback(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("policy-turns")), true));
    ExecutorService clients = Executors.newFixedThreadPool(8);
    try (TrainingNode node = TrainingNode.start(settings)) {
      for (int round = 0; round < 3; round++) {
        List<CompletableFuture<Http.Response>> puts = new ArrayList<>();
        for (int i = 1; i <= 12; i++) {
          // body i: canary-ratio i/100 and min-samples 100 + i, so a mixed result is visible
          String body = "{\"model-update.canary-ratio\": " + (i / 100.0) + ", \"trigger.min-samples\": " + (100 + i) + "}";
          puts.add(CompletableFuture.supplyAsync(() ->
              new Http(node.httpPort()).send("PUT", "/v1/training/" + AGENT + "/policy", body), clients));
        }
        for (CompletableFuture<Http.Response> put : puts) assertEquals(200, put.join().status(), put.join().body());
        JsonNode policy = new Http(node.httpPort()).get("/v1/training/" + AGENT + "/policy").json().get("policy");
        long ratioOf = Math.round(policy.get("model-update.canary-ratio").asDouble() * 100);
        assertEquals(100 + ratioOf, policy.get("trigger.min-samples").asLong(),
            "round " + round + ": both parts come from one PUT: " + policy);
      }
    } finally {
      clients.shutdownNow();
    }
  }
}
