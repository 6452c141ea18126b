package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * training-policy.md's "back to the file" ({@code PUT …/policy} with {}) sent again, over real HTTP
 * (H2): with no override in force it changes neither part. The coordinator journals it anyway; its
 * timeline line said "that change concerned the other part, see the model's audit", whose timeline
 * had no event for it (trial t18).
 */
class UnchangedPolicyTimelineTest {
  private static final String AGENT = "empty-policy-agent";

  @Test
  void aPutOfNothingOverNothingSaysNothingChanged() throws Exception {
    Path work = TestDatabases.outputDir("unchanged-policy-timeline");
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(work), true))) {
      Http http = new Http(node.httpPort());
      Http.Response set = http.send("PUT", "/v1/training/" + AGENT + "/policy", "{\"model-update.canary-ratio\": 0.1}");
      assertEquals(200, set.status(), set.body());
      assertEquals(200, http.send("PUT", "/v1/training/" + AGENT + "/policy", "{}").status());
      Http.Response again = http.send("PUT", "/v1/training/" + AGENT + "/policy", "{}");
      assertEquals(200, again.status(), again.body());

      String model = http.get("/v1/audit/model/" + AGENT + "/timeline").body();
      assertEquals(2, model.lines().filter(l -> l.contains("rollout settings changed by http")).count(),
          "the model journals a change of its part only: " + model);

      String coordinator = http.get("/v1/audit/coordinator/" + AGENT + "/timeline").body();
      assertFalse(coordinator.contains("concerned the other part"), coordinator);
      assertTrue(coordinator.contains("training policy set by http: no run-time overrides before or after"
          + " (the file's): this part is unchanged; whatever else the request changed is in the model's audit"),
          coordinator);
    }
  }
}
