package io.otl.node.hardening;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Trial t81 (a hostile-client sweep) posted a tool call whose output held {@code HF_TOKEN=hf_…}, a message
 * with a bare Hugging Face token and one with {@code OTL_AUTH_TOKEN=…}: the session's GET, the audit
 * answer and the export answered all three as sent. They are {@code [SECRET]} now, everywhere a client
 * can read them back (DesensitizerTokensTest has the rule's cases).
 */
class TokensOverHttpTest {
  private static final String HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz" + "01234567";
  /** Hugging Face tokens may be letters only: then HF_TOKEN=… has no digit, and was kept for that. */
  private static final String HF_LETTERS = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz" + "AbCdEfGh";
  private static final String NODE_TOKEN = "tok-" + "S3cretValue123";
  private static TrainingNode node;
  private static Http http;

  @BeforeAll
  static void start() throws Exception {
    Path target = Path.of("target").toAbsolutePath();
    Files.createDirectories(target);
    node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory(target, "tokens-").resolve("data")), true));
    http = new Http(node.httpPort());
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  @Test
  void huggingFaceAndNamedTokensAreNeverAnsweredBack() throws Exception {
    String body = """
        {"agentId":"hf-bot","events":[
          {"type":"message","eventId":"t1","role":"user","content":"my token is %s, pull the model"},
          {"type":"tool_call","eventId":"t2","callId":"c1","toolName":"shell","input":{"cmd":"env"},
           "output":{"stdout":"HF_TOKEN=%s\\nOTL_AUTH_TOKEN=%s","env":{"GITHUB_TOKEN":"%s"}},"success":true},
          {"type":"message","eventId":"t3","role":"assistant","content":"set X-Auth-Token: %s"},
          {"type":"result","eventId":"t4","status":"SUCCESS"}]}""".formatted(HF, HF_LETTERS, NODE_TOKEN, NODE_TOKEN, NODE_TOKEN);
    Http.Response posted = http.post("/v1/sessions/s-tokens/events", body);
    assertEquals(202, posted.status(), posted.body());

    Http.Response got = http.get("/v1/sessions/s-tokens");
    assertEquals(200, got.status(), got.body());
    assertEquals("my token is [SECRET], pull the model", got.json().get("messages").get(0).get("content").asText());
    assertEquals("set X-Auth-Token: [SECRET]", got.json().get("messages").get(1).get("content").asText());
    String stdout = got.json().get("toolCalls").get(0).get("output").get("stdout").asText();
    assertEquals("HF_TOKEN=[SECRET]\nOTL_AUTH_TOKEN=[SECRET]", stdout);
    assertEquals("[SECRET]", got.json().get("toolCalls").get(0).get("output").get("env").get("GITHUB_TOKEN").asText());

    Http.Response audit = http.get("/v1/audit/session/s-tokens");
    assertEquals(200, audit.status(), audit.body());
    long deadline = System.currentTimeMillis() + 20_000;
    Http.Response export = http.post("/v1/exports/hf-bot?format=sft", "{}");
    while (export.status() != 200 && System.currentTimeMillis() < deadline) {
      Thread.sleep(250); // the coordinator takes the trajectory from the feed within a few seconds
      export = http.post("/v1/exports/hf-bot?format=sft", "{}");
    }
    assertEquals(200, export.status(), export.body());
    assertTrue(export.body().contains("[SECRET]"), export.body());
    for (Http.Response r : new Http.Response[] {got, audit, export}) {
      assertFalse(r.body().contains(HF), r.body());
      assertFalse(r.body().contains(HF_LETTERS), r.body());
      assertFalse(r.body().contains(NODE_TOKEN), r.body());
    }
  }
}
