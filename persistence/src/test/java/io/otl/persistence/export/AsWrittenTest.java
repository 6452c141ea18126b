package io.otl.persistence.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.session.Desensitizer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Review t170: a line the final scan finds something in has its training content desensitized by the node's
 * rules, never its {@code metadata} (ids the manifest joins on) or a JSON number (whose type the line's own
 * {@code tools} schema states); a line whose ids or numbers hold what the rules take is left out.
 */
class AsWrittenTest {
  private static final Desensitizer SCANNER = Desensitizer.builtInScanner();
  private static final Desensitizer NODE = Desensitizer.builtInScanner();

  private static final String TOOLS = "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"dial\","
      + "\"parameters\":{\"type\":\"object\",\"properties\":{\"number\":{\"type\":\"integer\"}}}}}]";

  private static String sft(String arguments) {
    return "{\"messages\":[{\"role\":\"user\",\"content\":\"call the customer\"},{\"role\":\"assistant\","
        + "\"content\":\"\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"dial\","
        + "\"arguments\":" + arguments + "}}]}]," + TOOLS + "}";
  }

  private static String rl(String prompt, String sessionId) {
    return "{\"prompt\":\"" + prompt + "\",\"reward\":1.0,\"metadata\":{\"sessionId\":\"" + sessionId
        + "\",\"agentId\":\"agent-a\",\"qualityScore\":0.8}}";
  }

  @Test
  void anIntegerTheRulesTakeLeavesTheLineOutInsteadOfBecomingAString(@TempDir Path dir) throws Exception {
    AsWritten integer = AsWritten.of(SCANNER, NODE, sft("{\"number\":13812345678}"));
    assertEquals(AsWritten.PII_IN_A_NUMBER, integer.leftOut());
    assertEquals(AsWritten.PII_IN_A_NUMBER, AsWritten.of(SCANNER, NODE, sft("{\"number\":1.3812345678E10}")).leftOut(),
        "a whole number written as a float is one too");

    // in a string, the number is text: desensitized, the line written; the other numbers stay as they are
    AsWritten text = AsWritten.of(SCANNER, NODE,
        "{\"messages\":[{\"role\":\"user\",\"content\":\"call 13812345678\"}],\"n\":1234567,\"r\":0.25}");
    assertEquals("{\"messages\":[{\"role\":\"user\",\"content\":\"call [PHONE]\"}],\"n\":1234567,\"r\":0.25}",
        text.line());
    assertTrue(text.written() && text.desensitized() && text.findings().isEmpty());

    // rules that do not take phone numbers (left out of desensitize.patterns): a finding, as before
    Desensitizer noPhone = new Desensitizer(true, List.of("email"), List.of());
    AsWritten kept = AsWritten.of(SCANNER, noPhone, sft("{\"number\":13812345678}"));
    assertTrue(kept.written());
    assertEquals(Set.of("phone"), kept.findings());

    JsonlFile out = new JsonlFile(dir.resolve("sft.jsonl"), NODE);
    assertEquals(Optional.of(AsWritten.PII_IN_A_NUMBER), out.write(sft("{\"number\":13812345678}"), List.of("s1")));
    assertEquals(Optional.empty(), out.write(sft("{\"number\":4711}"), List.of("s2")));
    JsonlFile.Written w = out.commit(false);
    assertEquals(List.of("s2"), w.sessionIds());
    assertEquals(List.of(sft("{\"number\":4711}")), Files.readAllLines(w.path()));
    assertEquals(0, out.desensitized());
  }

  @Test
  void metadataIsNeverRewritten() {
    // the prompt an earlier build stored raw is desensitized; the ids stay byte for byte
    AsWritten prompt = AsWritten.of(SCANNER, NODE, rl("mail ann@example.com", "s-1"));
    assertEquals(rl("mail [EMAIL]", "s-1"), prompt.line());
    assertTrue(prompt.desensitized());

    // ids holding what the node's rules take: the line is left out, not rewritten to s-[PHONE]
    assertEquals(AsWritten.PII_IN_METADATA, AsWritten.of(SCANNER, NODE, rl("hello", "s-555-123-4567")).leftOut());
    assertEquals(AsWritten.PII_IN_METADATA,
        AsWritten.of(SCANNER, NODE, rl("mail ann@example.com", "s-555-123-4567")).leftOut());

    // with desensitizing off nothing is applied: a finding, which refuses the file as before
    AsWritten off = AsWritten.of(SCANNER, new Desensitizer(false, List.of(), List.of()), rl("hello", "s-555-123-4567"));
    assertEquals(rl("hello", "s-555-123-4567"), off.line());
    assertEquals(Set.of("phone"), off.findings());
    assertFalse(off.desensitized());
  }

  @Test
  void aCleanLineIsWrittenAsGiven() {
    String line = rl("what is the refund policy 307?", "s-2");
    AsWritten clean = AsWritten.of(SCANNER, NODE, line);
    assertTrue(clean.written() && !clean.desensitized() && clean.findings().isEmpty());
    assertTrue(line == clean.line(), "not parsed and written again");
  }
}
