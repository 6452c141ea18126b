package io.otl.node.cluster;

import static io.otl.node.cluster.CrashWitness.await;
import static io.otl.node.cluster.CrashWitness.ready;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * GET {@code /v1/training/{agentId}/policy} answers the same on every node of a cluster (found by the
 * SRE trial on the 3-node script). The policy comes from the agent's coordinator and ModelVersion,
 * which live on one node each; a node that asks them on another node gets the reply through Pekko's
 * Jackson serializer, which reads the list values back as Scala lists, and the answer showed
 * {@code "trigger.type":{"empty":false,"traversableAgain":true}} (also {@code model-update.steps} and
 * {@code evaluation-metrics}, in {@code policy} and {@code overrides}) on every node but the entity's.
 * Two node JVMs, so each entity is remote to one of them; the PUT's own answer is checked too.
 */
class PolicyOnEveryNodeTest {
  private static final String AGENT = "policy-bot";
  private static final ObjectMapper JSON = new ObjectMapper();
  private final List<NodeProcess> nodes = new ArrayList<>();

  @AfterEach
  void stop() {
    nodes.forEach(NodeProcess::close);
  }

  @Test
  void listValuesOfThePolicyAreJsonArraysOnEveryNode() throws Exception {
    Config db = TestDatabases.postgres();
    String url = db.getString("agentscope.training.db.url");
    Path dir = Files.createDirectories(Path.of("target", "policy-every-node-" + System.nanoTime()).toAbsolutePath());
    int[] ports = {NodeProcess.freePort(), NodeProcess.freePort()};
    String seeds = NodeProcess.seedNodes(ports);
    Map<String, String> env = NodeProcess.clusterEnv(seeds, url, TestDatabases.PG_USER, TestDatabases.PG_PASSWORD);
    for (int i = 0; i < ports.length; i++) {
      NodeProcess node = new NodeProcess("node" + (i + 1), ports[i], NodeProcess.freePort(), NodeProcess.freePort(),
          env, dir);
      nodes.add(node);
      node.start();
    }
    List<Http> https = nodes.stream().map(n -> new Http(n.httpPort)).toList();
    for (int i = 0; i < nodes.size(); i++) {
      Http http = https.get(i);
      await(nodes.get(i).name + " ready (a member Up)", () -> ready(http), nodes.get(i));
    }

    String body = """
        {"trigger.type":["threshold","manual"],"trigger.min-samples":40,
         "model-update.steps":[0.6,1.0],"model-update.canary-ratio":0.3,
         "model-update.evaluation-metrics":["task-success-rate"]}""";
    Http.Response[] put = new Http.Response[1];
    await("PUT policy answered 200", () -> {
      put[0] = https.get(0).put("/v1/training/" + AGENT + "/policy", body);
      return put[0].status() == 200;
    }, nodes.get(0));
    assertLists(put[0].json(), "PUT on " + nodes.get(0).name);

    for (int i = 0; i < nodes.size(); i++) {
      Http http = https.get(i);
      Http.Response[] get = new Http.Response[1];
      await("GET policy on " + nodes.get(i).name, () -> {
        get[0] = http.get("/v1/training/" + AGENT + "/policy");
        return get[0].status() == 200;
      }, nodes.get(i));
      assertLists(get[0].json(), "GET on " + nodes.get(i).name);
    }
  }

  private static void assertLists(JsonNode answer, String where) throws Exception {
    for (String part : new String[] {"policy", "overrides"}) {
      JsonNode m = answer.path(part);
      assertEquals(JSON.readTree("[\"threshold\",\"manual\"]"), m.path("trigger.type"), where + " " + part + ": " + answer);
      assertEquals(JSON.readTree("[0.6,1.0]"), m.path("model-update.steps"), where + " " + part + ": " + answer);
      assertEquals(JSON.readTree("[\"task-success-rate\"]"), m.path("model-update.evaluation-metrics"),
          where + " " + part + ": " + answer);
    }
  }
}
