package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The example body of {@code PUT /v1/training/{agentId}/policy} in docs/api.md, sent as it stands to
 * a node on the default configuration, is accepted. Trial t119: the page's example set
 * {@code model-update.canary-ratio} to 0.2, the default {@code model-update.steps}' first ratio, so a
 * new user copying it got 400 {@code model-update.steps: must be ratios above model-update.canary-ratio}.
 */
class DocumentedPolicyExampleTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final Pattern PUT_ROW =
      Pattern.compile("\\| PUT `/v1/training/\\{agentId}/policy` \\| body: [^`]*e\\.g\\. `(\\{[^`]*})`");

  @Test
  void theApiPagesPolicyExampleIsAcceptedOnTheDefaults(@TempDir Path dir) throws Exception {
    Matcher m = PUT_ROW.matcher(Files.readString(ROOT.resolve("docs/api.md")));
    assertTrue(m.find(), "docs/api.md has the PUT …/policy row with an example body");
    String example = m.group(1);
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir.resolve("data")), true))) {
      Http http = new Http(node.httpPort());
      // A 503 (the coordinator starting on a loaded machine) says "retry the request": retried.
      Http.Response r = Await.until("an answer other than 503", () -> http.put("/v1/training/doc-bot/policy", example),
          x -> x.status() != 503);
      assertEquals(200, r.status(), example + " -> " + r.body());
      assertEquals(50, r.json().get("policy").get("trigger.min-samples").asInt(), r.body());

      // The canary ratio alone, at the default steps' first ratio: the default steps follow it (a 400
      // on steps the client never sent, before), while steps it sends must still start above it.
      Http.Response ratio = http.put("/v1/training/doc-bot/policy", "{\"model-update.canary-ratio\":0.2}");
      assertEquals(200, ratio.status(), ratio.body());
      assertEquals("[0.5,1.0]", ratio.json().get("policy").get("model-update.steps").toString(), ratio.body());
      Http.Response both = http.put("/v1/training/doc-bot/policy",
          "{\"model-update.canary-ratio\":0.2,\"model-update.steps\":[0.2,1.0]}");
      assertEquals(400, both.status(), both.body());
      assertTrue(both.json().get("message").asText().startsWith("model-update.steps: must be ratios above"), both.body());
    }
  }
}
