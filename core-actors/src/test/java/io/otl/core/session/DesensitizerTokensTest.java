package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Trial t81 sent a tool's output holding {@code HF_TOKEN=hf_…}, a bare Hugging Face token and
 * {@code OTL_AUTH_TOKEN=…} (the node's own API token) as message content: all three were journaled, answered
 * by GET and exported as sent. A Hugging Face token is the key a training control plane meets most
 * (it pulls the base model and pushes the checkpoint), and only {@code access_token}/{@code refresh_token}
 * were taken as the names of credentials. Now {@code hf_} + 30 or more letters and digits is a key, and so
 * is the value of any setting whose name ends in {@code token} after a word ({@code HF_TOKEN},
 * {@code authToken}, {@code X-Auth-Token}) or is {@code api-key} written with a dash ({@code X-Api-Key}).
 * Tokens are assembled at run time so that no token-shaped literal sits in the source.
 */
class DesensitizerTokensTest {
  private static final Desensitizer DEFAULT = SessionSettings.fromConfig(
      ConfigFactory.load().getConfig("agentscope.training")).desensitizer();

  private static String hf() {
    return "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz" + "01234567";
  }

  @Test
  void aHuggingFaceTokenIsASecretWhereverItStands() {
    assertEquals("login --token [SECRET] ok", DEFAULT.apply("login --token " + hf() + " ok"));
    assertEquals("[SECRET]", DEFAULT.apply(hf()));
    assertEquals("HF_TOKEN=[SECRET]", DEFAULT.apply("HF_TOKEN=" + hf()));
    // Hugging Face tokens may be letters only: the setting's value has no digit, the token is still one
    String letters = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz" + "AbCdEfGh";
    assertEquals("HF_TOKEN=[SECRET]", DEFAULT.apply("HF_TOKEN=" + letters));
    assertEquals("{\"hf_token\": \"[SECRET]\"}", DEFAULT.apply("{\"hf_token\": \"" + letters + "\"}"));
    assertEquals("login --token [SECRET]", DEFAULT.apply("login --token " + letters));
    assertEquals("(\"[SECRET]\")", DEFAULT.apply("(\"" + hf() + "\")"));
    assertEquals(List.of("secret"), Desensitizer.builtInScanner().findings("k " + hf()),
        "the export's final scan finds it too");
    assertTrue(PiiRules.scan("x hf_").secretHint());
  }

  @Test
  void theValueOfASettingNamedAsATokenIsASecret() {
    String opaque = "tok-S3cretValue123";
    for (String name : List.of("OTL_AUTH_TOKEN", "GITHUB_TOKEN", "hf_token", "authToken", "X-Auth-Token", "id_token",
        "access_token", "X-Api-Key", "api-key")) {
      assertEquals(name + "=[SECRET]", DEFAULT.apply(name + "=" + opaque), name);
      assertEquals(name + ": [SECRET]", DEFAULT.apply(name + ": " + opaque), name);
      assertEquals(List.of("secret"), Desensitizer.builtInScanner().findings(name + "=" + opaque), name);
    }
    assertEquals("OTL_AUTH_TOKEN=[SECRET]", DEFAULT.apply("OTL_AUTH_TOKEN=s3cr3t99"), "eight characters: a token");
  }

  @Test
  void aJsonValueUnderATokenKeyIsReplaced() throws Exception {
    JsonNode in = new ObjectMapper().readTree(
        "{\"HF_TOKEN\":\"tok-S3cretValue123\",\"auth\":{\"botToken\":\"abc123def456ghi\"},\"max_tokens\":4096}");
    JsonNode out = DEFAULT.apply(in);
    assertEquals("[SECRET]", out.get("HF_TOKEN").asText());
    assertEquals("[SECRET]", out.get("auth").get("botToken").asText());
    assertEquals(4096, out.get("max_tokens").asInt());
  }

  @ParameterizedTest
  @ValueSource(strings = {
    "max_tokens=12345678 and max_new_tokens: 40960000",  // counts, not credentials
    "max_token: 4096, prompt_token=512, num_token: 1234567", // counts under '…token' names: under 8 characters
    "token: 12345678abc is the 3rd token",                // a bare 'token' is a tokenizer's word
    "pad_token: <|endoftext|> eos_token=</s>",            // special tokens: no digit, or '<'
    "GITHUB_TOKEN=changeme",                              // no digit: a placeholder
    "hf_hub_download and hf_transfer, HF_HOME=/data/hf", // Hugging Face identifiers, no token
    "the hf_" + "abcdefghijklmnopqrstuvwxyzabcdefgh stays" // 34 lower-case letters: a word, not a key
  })
  void wordsAroundTokensStayAsSent(String text) {
    assertSame(text, DEFAULT.apply(text));
    assertEquals(List.of(), Desensitizer.builtInScanner().findings(text));
  }
}
