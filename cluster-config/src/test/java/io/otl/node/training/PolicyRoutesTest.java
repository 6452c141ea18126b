package io.otl.node.training;

import static io.otl.node.training.TrainingLoopTest.completeSession;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.ConfigFactory;
import io.otl.core.coordinator.PolicyOverrides;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code GET/PUT /v1/training/{agentId}/policy} over real HTTP against a node (H2): a change is
 * in force and shown in the audit timeline; an unknown key, a bad value or a key the agent cannot
 * override is a 400 naming it, and changes nothing; reading an unknown agent is a 404, and a PUT
 * may come before the agent's first trajectory.
 */
class PolicyRoutesTest {
  private static final String AGENT = "policy-agent";
  private static TrainingNode node;
  private static Http http;

  @BeforeAll
  static void start() throws Exception {
    Path work = TestDatabases.outputDir("policy-routes");
    node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.trigger.type", "threshold",
            "agentscope.training.training-runner.trigger.min-samples", 1000,
            "agentscope.training.read-side.rescan-interval", "1s",
            "agentscope.training.agents." + AGENT + ".base-model", "file-model"))
        .withFallback(TestDatabases.node(TestDatabases.h2(work), true)));
    http = new Http(node.httpPort());
    completeSession(http, AGENT, "policy-s1", 0);
    Await.until("the agent's coordinator", () -> {
      Http.Response r = http.get("/v1/training/" + AGENT);
      return r.status() == 200 ? r.json() : null;
    }, t -> t.get("poolSize").asInt() == 1);
  }

  @AfterAll
  static void stop() {
    node.close();
  }

  private static Http.Response put(String agent, String body) {
    return http.send("PUT", "/v1/training/" + agent + "/policy", body);
  }

  /** A PUT of the agent's policy that must be refused with 400. */
  private static Http.Response refused(String body) {
    Http.Response r = put(AGENT, body);
    assertEquals(400, r.status(), r.body());
    return r;
  }

  /**
   * A PUT refused with 400, its message starting with {@code start} and naming the key as the client
   * sent it (not the file's full path), the client's {@code secret} (when not null) not sent back.
   */
  private static void refusedNotEchoed(String body, String start, String secret) {
    Http.Response r = refused(body);
    String message = r.json().get("message").asText();
    assertTrue(message.startsWith(start), message);
    assertFalse(message.contains("agentscope.training"), message);
    if (secret != null) assertFalse(r.body().contains(secret), r.body());
  }

  /** The agent's policy as GET answers it. */
  private static JsonNode policy() {
    return http.get("/v1/training/" + AGENT + "/policy").json();
  }

  @Test
  void putChangesTheEffectivePolicyAndTheAuditShowsIt() {
    JsonNode before = policy();
    assertEquals("file-model", before.get("policy").get("base-model").asText(), "the file's per-agent key");
    assertEquals(1000, before.get("policy").get("trigger.min-samples").asInt());

    Http.Response r = put(AGENT, "{\"trigger\": {\"min-samples\": 500}, \"algorithm\": \"dpo\"}");
    assertEquals(200, r.status(), r.body());
    assertEquals(500, r.json().get("policy").get("trigger.min-samples").asInt());
    assertEquals("dpo", r.json().get("policy").get("algorithm").asText());
    assertEquals("file-model", r.json().get("policy").get("base-model").asText(), "file keys stay");
    assertEquals("http", r.json().get("changedBy").asText());
    assertEquals(2, r.json().get("overrides").size());

    JsonNode got = policy();
    assertEquals(r.json().get("policy"), got.get("policy"));
    assertEquals(500, http.get("/v1/training/" + AGENT).json().get("minSamples").asInt());

    String timeline = http.get("/v1/audit/coordinator/" + AGENT + "/timeline").body();
    assertTrue(timeline.contains("policy changed by http: run-time overrides {trigger.min-samples=500, algorithm=dpo}")
        || timeline.contains("policy changed by http: run-time overrides {algorithm=dpo, trigger.min-samples=500}"),
        timeline);
  }

  @Test
  void badInputIsA400NamingTheKeyAndChangesNothing() {
    JsonNode before = policy();

    Http.Response unknown = refused("{\"trigger.minimum\": 5}");
    assertTrue(unknown.json().get("message").asText().contains(
        "trigger.minimum cannot be set per agent; allowed: trigger.type, trigger.cron, trigger.min-samples"),
        unknown.body());

    Http.Response nodeWide = refused("{\"backend\": \"trinity-proxy\"}");
    assertTrue(nodeWide.json().get("message").asText().startsWith("backend cannot be set per agent"), nodeWide.body());

    Http.Response bad = refused("{\"trigger.min-samples\": \"many\"}");
    assertTrue(bad.json().get("message").asText().contains("trigger.min-samples"), bad.body());

    Http.Response zero = refused("{\"hyperparams.batch-size\": 0}");
    assertTrue(zero.json().get("message").asText().contains("hyperparams.batch-size"), zero.body());

    refused("min-samples=5");
    refused("[1]");

    assertEquals(before, policy(), "nothing changed");
  }

  /** A mistyped hyperparameter would train with the default: 400 naming the key as sent and the known names. */
  @Test
  void anUnknownHyperparameterIsA400NamingItAndChangesNothing() {
    JsonNode before = policy();
    Http.Response r = refused("{\"hyperparams.lerning-rate\": 1e-5}");
    String message = r.json().get("message").asText();
    assertTrue(message.startsWith("hyperparams.lerning-rate: not a hyperparameter the training backend reads "
        + "(did you mean learning-rate?); known: learning-rate, batch-size,"), message);
    assertFalse(message.contains("agentscope.training"), message);
    Http.Response nested = refused("{\"hyperparams\": {\"epochs\": 2, \"lerning-rate\": 1e-5}}");
    assertTrue(nested.json().get("message").asText().startsWith("hyperparams.lerning-rate: "), nested.body());
    // A name that is no plain word is client text: not echoed.
    Http.Response phone = refused("{\"hyperparams\": {\"13812345678\": 1}}");
    assertFalse(phone.body().contains("13812345678"), phone.body());
    assertEquals(before, policy(), "nothing changed");
  }

  /** A key is client data (docs/http-edge.md): one that is not a plain word shows as *, never as sent. */
  @Test
  void anUnknownKeyThatIsNotAPlainWordIsNotEchoed() {
    JsonNode before = policy();
    for (String body : new String[] {"{\"jane.doe@example.com\": 5}", "{\"+15551234567\": 1}",
        "{\"trigger\": {\"555-0100\": 1}}", "{\"555-0100\": 1}", "{\"x1\": null}"}) {
      Http.Response r = refused(body);
      String message = r.json().get("message").asText();
      // Keys HOCON cannot even read as a path ('@', '+') are refused before they are named.
      assertTrue(message.startsWith("* ") || message.startsWith("a key of the policy is not a key name"), message);
      for (String secret : new String[] {"jane", "example", "5551234567", "555-0100"}) {
        assertFalse(r.body().contains(secret), r.body());
      }
    }
    assertEquals(before, policy(), "nothing changed");
  }

  /**
   * A bad value is named by the key as the client sent it (not the file's full path), and the value
   * itself, client text, is never sent back.
   */
  @Test
  void aBadValueIsNamedByItsKeyAndNotEchoed() {
    JsonNode before = policy();
    refusedNotEchoed("{\"algorithm\": \"jane.doe@example.com\"}", "algorithm: must be one of sft", "jane");
    refusedNotEchoed("{\"trigger.cron\": \"13812345678\"}", "trigger.cron: must be a 6-field cron expression",
        "13812345678");
    refusedNotEchoed("{\"hyperparams\": {\"epochs\": \"13812345678x\"}}", "hyperparams.epochs: must be an integer",
        "13812345678");
    refusedNotEchoed("{\"trigger.min-samples\": 0}", "trigger.min-samples: must be an integer >= 1", null);
    assertEquals(before, policy(), "nothing changed");
  }

  /**
   * A refused number that also appears in the allowed range is the range's: the message states the
   * range as it is. The mask once replaced every occurrence of the value's text, so {@code 1} read
   * "must be a number in (0.5, (the value given))" and {@code 0} "((the value given).5, 1)".
   */
  @Test
  void aRefusedNumberLeavesTheAllowedRangeIntact() {
    JsonNode before = policy();
    for (String v : new String[] {"0", "1", "5", "0.5"}) {
      refusedNotEchoed("{\"model-update.confidence\": " + v + "}",
          "model-update.confidence: must be a number in (0.5, 1)", "(the value given)");
    }
    refusedNotEchoed("{\"model-update.canary-ratio\": 1}", "model-update.canary-ratio: must be a number in (0, 1)",
        "(the value given)");
    refusedNotEchoed("{\"model-update.canary-ratio\": 0}", "model-update.canary-ratio: must be a number in (0, 1)",
        "(the value given)");
    // A metric given as a string instead of a list: the allowed names are listed as they are.
    refusedNotEchoed("{\"model-update.evaluation-metrics\": \"task-success-rate\"}",
        "model-update.evaluation-metrics: must be a list of: task-success-rate, user-satisfaction, response-latency",
        "(the value given)");
    // A long number may be personal data: still not echoed.
    refusedNotEchoed("{\"model-update.confidence\": 13812345678}", "model-update.confidence: must be a number",
        "13812345678");
    assertEquals(before, policy(), "nothing changed");
  }

  /**
   * A cron expression sent with five fields is shown back whole: it is no personal data (digits of
   * fewer than 7, spaces and cron symbols), and masking it also masked the example and the suggested
   * fix that contain it, which read "such as \"(the value given) ?\"" and "\"0 (the value given)\"?".
   */
  @Test
  void aCronExpressionIsQuotedInItsErrorNotMaskedIntoTheExample() {
    JsonNode before = policy();
    Http.Response r = refused("{\"trigger.cron\": \"0 0 2 * *\"}");
    String message = r.json().get("message").asText();
    assertTrue(message.startsWith("trigger.cron: must be a 6-field cron expression"), message);
    assertTrue(message.contains("such as \"0 0 2 * * ?\""), message);
    assertTrue(message.contains("(a seconds field comes first: \"0 0 0 2 * *\"?)"), message);
    assertFalse(message.contains("(the value given)"), message);
    // A long digit run in a cron field is not echoed.
    refusedNotEchoed("{\"trigger.cron\": \"0 0 13812345678 * *\"}", "trigger.cron: must be", "13812345678");
    assertEquals(before, policy(), "nothing changed");
  }

  /**
   * A string value holding personal data would be journaled as sent (the policy-changed event): it is
   * refused with 400 naming the key, the value not repeated, nothing changed.
   */
  @Test
  void aValueThatHoldsPersonalDataIsRefusedAndNotJournaled() {
    JsonNode before = policy();
    refusedNotEchoed("{\"base-model\": \"jane.doe@example.com\"}", "base-model: looks like personal data", "jane");
    refusedNotEchoed("{\"hyperparams\": {\"teacher-model\": \"call 13812345678\"}}",
        "hyperparams.teacher-model: looks like personal data", "13812345678");
    assertEquals(before, policy(), "nothing changed");
    String audit = http.get("/v1/audit/coordinator/" + AGENT).body();
    assertFalse(audit.contains("jane.doe") || audit.contains("13812345678"), audit);
  }

  /**
   * A string longer than any model name or path is refused: a 100,000-character base-model was
   * journaled as sent (and would be repeated in every job's request). 4,096 characters still pass.
   */
  @Test
  void aValueLongerThanANameOrPathIsRefusedAndNotJournaled() {
    JsonNode before = policy();
    String longName = "m".repeat(PolicyOverrides.MAX_VALUE_LENGTH + 1);
    refusedNotEchoed("{\"base-model\": \"" + longName + "\"}",
        "base-model: must be at most 4096 characters", longName);
    refusedNotEchoed("{\"hyperparams\": {\"workflow-type\": \"" + "w".repeat(100_000) + "\"}}",
        "hyperparams.workflow-type: must be at most 4096 characters", "wwwwwwwwww");
    assertEquals(before, policy(), "nothing changed");
    assertFalse(http.get("/v1/audit/coordinator/" + AGENT).body().contains(longName));

    String longest = "m".repeat(PolicyOverrides.MAX_VALUE_LENGTH);
    Http.Response ok = put("policy-long", "{\"base-model\": \"" + longest + "\"}");
    assertEquals(200, ok.status());
    assertEquals(longest, ok.json().get("policy").get("base-model").asText());
  }

  /** A trigger or cancel that carries settings is refused, not run without them. */
  @Test
  void aTriggerWithABodyIsRefusedAndStartsNothing() {
    String jobs = http.get("/v1/jobs?agentId=" + AGENT).body();
    Http.Response r = http.post("/v1/training/" + AGENT + "/trigger", "{\"algorithm\": \"dpo\"}");
    assertEquals(400, r.status(), r.body());
    assertTrue(r.json().get("message").asText().contains("PUT /v1/training/" + AGENT + "/policy"), r.body());
    Http.Response cancel = http.post("/v1/jobs/job-1-" + AGENT + "/cancel", "{\"reason\": \"x\"}");
    assertEquals(400, cancel.status(), cancel.body());
    assertEquals(jobs, http.get("/v1/jobs?agentId=" + AGENT).body(), "no job started or cancelled");
    Http.Response page = http.get("/v1/jobs/job-1-" + AGENT + "/logs?offset=13812345678");
    assertEquals(400, page.status(), page.body());
    assertFalse(page.body().contains("13812345678"), "query text is not echoed: " + page.body());
  }

  @Test
  void anUnknownAgentIs404ForReads() {
    assertEquals(404, http.get("/v1/training/nobody-here/policy").status());
    assertEquals(404, http.get("/v1/training/nobody-here").status());
    assertEquals(400, put("bad%20agent%21", "{}").status());
  }

  /**
   * A policy may come before the agent's first trajectory (set the threshold, then send sessions):
   * the PUT starts the coordinator with it. A refused PUT creates nothing.
   */
  @Test
  void aPolicyMayBeSetBeforeTheFirstTrajectory() throws Exception {
    String agent = "policy-first";
    Http.Response bad = put(agent, "{\"trigger.min-samples\": 0}");
    assertEquals(400, bad.status(), bad.body());
    assertEquals(404, http.get("/v1/training/" + agent).status(), "a refused PUT creates no agent");
    assertEquals(404, http.get("/v1/training/" + agent + "/policy").status());

    Http.Response r = put(agent, "{\"trigger.min-samples\": 2, \"algorithm\": \"dpo\"}");
    assertEquals(200, r.status(), r.body());
    assertEquals(2, r.json().get("policy").get("trigger.min-samples").asInt());
    assertEquals("dpo", r.json().get("policy").get("algorithm").asText());
    JsonNode training = http.get("/v1/training/" + agent).json();
    assertEquals(0, training.get("poolSize").asInt());
    assertEquals(2, training.get("minSamples").asInt());
    assertEquals(r.json().get("policy"), http.get("/v1/training/" + agent + "/policy").json().get("policy"));

    completeSession(http, agent, "policy-first-s1", 0);
    Await.until("the trajectory pooled under the policy set first", () -> {
      Http.Response t = http.get("/v1/training/" + agent);
      return t.status() == 200 ? t.json() : null;
    }, t -> t.get("poolSize").asInt() == 1 && t.get("minSamples").asInt() == 2);
  }
}
