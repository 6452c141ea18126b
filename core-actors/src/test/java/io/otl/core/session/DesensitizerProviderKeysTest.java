package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Trial t87 found the keys of inference providers an agent platform meets every day (Groq {@code gsk_},
 * Replicate {@code r8_}, GitLab {@code glpat-}, xAI {@code xai-}, NVIDIA {@code nvapi-}) journaled as sent:
 * no rule knew their prefixes. Each is {@code [SECRET]} now, as the formats known before are (checked here
 * again in one place: GitHub fine-grained, Slack, Google, Stripe, AWS, Anthropic, JWT). Keys are
 * assembled at run time so that no key-shaped literal sits in the source.
 */
class DesensitizerProviderKeysTest {
  private static final Desensitizer DEFAULT = SessionSettings.fromConfig(
      ConfigFactory.load().getConfig("agentscope.training")).desensitizer();
  private static final String MIXED = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";

  /** {@code n} characters of mixed letters and digits, as a key's random body. */
  private static String body(int n) {
    return MIXED.repeat(n / MIXED.length() + 1).substring(0, n);
  }

  /** One key of each format, in its real length. */
  static Map<String, String> keys() {
    return Map.ofEntries(
        Map.entry("groq", "gsk_" + body(52)),
        Map.entry("replicate", "r8_" + body(37)),
        Map.entry("gitlab", "glpat-" + "x9Fq-Zt2_bK7mLp4Rw8v"),
        Map.entry("gitlab-routable", "glpat-" + "Qm9vYmFyQmF6MTIzNDU2Nzg5MA" + ".01." + "0w1z2y3x4"),
        Map.entry("xai", "xai-" + body(80)),
        Map.entry("nvidia", "nvapi-" + body(30) + "-" + body(33)),
        Map.entry("github-fine-grained", "github_pat_" + "11ABCDEFG0" + "_" + body(59)),
        Map.entry("slack-bot", "xoxb-" + "1234567890-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx"),
        Map.entry("slack-user", "xoxp-" + "1234567890-1234567890123-1234567890123-" + "0123456789abcdef0123456789abcdef"),
        Map.entry("google", "AIza" + body(35)),
        Map.entry("stripe-live", "sk_live_" + body(24)),
        Map.entry("stripe-restricted", "rk_live_" + body(24)),
        Map.entry("aws", "AKIA" + "IOSFODNN7EXAMPLE"),
        Map.entry("anthropic", "sk-ant-api03-" + body(93) + "-" + "AbCdEfAA"),
        Map.entry("jwt", "eyJ" + "hbGciOiJIUzI1NiJ9" + ".eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0" + "." + "dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"));
  }

  static List<String> names() {
    return keys().keySet().stream().sorted().toList();
  }

  @ParameterizedTest
  @MethodSource("names")
  void eachKeyIsASecretWhereverItStands(String name) throws Exception {
    String key = keys().get(name);
    assertEquals("[SECRET]", DEFAULT.apply(key), name);
    assertEquals("export KEY=[SECRET] && run", DEFAULT.apply("export KEY=" + key + " && run"), name);
    assertEquals("my key is [SECRET].", DEFAULT.apply("my key is " + key + "."), name);
    assertEquals("(\"[SECRET]\")", DEFAULT.apply("(\"" + key + "\")"), name);
    JsonNode tree = new ObjectMapper().readTree("{\"headers\":{\"x\":\"" + key + "\"},\"list\":[\"a " + key + "\"]}");
    JsonNode out = DEFAULT.apply(tree);
    assertEquals("[SECRET]", out.get("headers").get("x").asText(), name);
    assertEquals("a [SECRET]", out.get("list").get(0).asText(), name);
    assertEquals(List.of("secret"), Desensitizer.builtInScanner().findings("k " + key), "the export's final scan: " + name);
  }

  @Test
  void theNewPrefixesRunTheSecretRule() {
    for (String p : List.of("x gsk_", "x r8_", "x glpat-", "x xai-", "x nvapi-")) {
      assertTrue(PiiRules.scan(p).secretHint(), p);
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {
    "the xai-research team and xai-grok-2 model",          // the company's name in prose and a model id
    "r8_ alone, r8_ok, r8_model_v2",                         // too short to be a key
    "gsk_ is Groq's prefix; gsk_demo",                      // the prefix named, no key
    "nvapi-based inference via nvapi-compatible endpoints", // words after the prefix
    "glpat-xxxxxxxxxxxxxxxxxxxx is a placeholder",          // one kind of character: a docs placeholder
    "glpat-token-description-for-the-ci-runner",            // lower-case words joined
    "xai-" + "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstu", // 47 lower-case letters: no key
    "hgsk_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOp", // glued to a word: not a prefix
    "gr8_work, xai, nvapi, glpat, r8",                      // short strings
    "task-based risk_free xaiver gskill"                    // look-alike words
  })
  void ordinaryTextStays(String text) {
    assertSame(text, DEFAULT.apply(text), text);
    assertEquals(List.of(), Desensitizer.builtInScanner().findings(text), text);
  }
}
