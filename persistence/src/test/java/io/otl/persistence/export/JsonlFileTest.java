package io.otl.persistence.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.session.Desensitizer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A job's data folder is read by {@code datasets.load_dataset(folder, split=…)}, which takes every
 * file whose name starts with the split ({@code train.jsonl.tmp} too) but skips dot files: while a
 * file is written, and after a crash mid-write, the folder holds no visible partial file.
 */
class JsonlFileTest {

  private static List<String> names(Path dir) throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void thePartialFileIsHiddenInTheJobsFolderUntilCommitted(@TempDir Path dir) throws Exception {
    Path target = JobDatasetFiles.trainFile(dir, "job-1");
    JsonlFile out = new JsonlFile(target);
    out.write("{\"prompt\":\"hi\"}", List.of("s1"));
    List<String> whileWriting = names(target.getParent());
    assertTrue(whileWriting.stream().allMatch(n -> n.startsWith(".")), "visible while writing: " + whileWriting);

    out.commit();
    assertEquals(List.of("train.jsonl"), names(target.getParent()));
    assertEquals(List.of("{\"prompt\":\"hi\"}"), Files.readAllLines(target));
  }

  /**
   * An RL line's task key of a session without taskId is a SHA-256 of its prompt; this prompt's
   * hex holds "19592737038", which the final scan took for a phone number and the file was deleted.
   */
  /**
   * A journal written before floats were desensitized (release 72539f34) holds a tool's phone number
   * sent as 13812345678.0 as it was stored, and an upgraded node exported it into the SFT line below
   * (taken from such an export) with an empty piiFindings: the exponent split the digits.
   */
  @Test
  void aPhoneNumberWrittenWithAnExponentByAnEarlierBuildIsFound(@TempDir Path dir) throws Exception {
    JsonlFile out = new JsonlFile(dir.resolve("sft.jsonl"));
    out.write("{\"messages\":[{\"role\":\"user\",\"content\":\"Refund order 4711\"},{\"role\":\"assistant\","
        + "\"content\":\"\",\"tool_calls\":[{\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"refund\","
        + "\"arguments\":{\"orderId\":4711,\"amount\":12.5,\"exp\":1.0E-7,\"phone\":1.3812345678E10}}}]}]}",
        List.of("s1"));
    JsonlFile.Written written = out.commit(false);
    assertEquals(List.of("phone: 1 line"), written.piiFindings());
    assertTrue(Files.notExists(written.path()), "the file is not kept");

    JsonlFile measurements = new JsonlFile(dir.resolve("clean.jsonl"));
    measurements.write("{\"arguments\":{\"big\":1.2345E10,\"small\":1.0E-7,\"ratio\":1.3812345678901E10,"
        + "\"hash\":\"a1e10b\"}}", List.of("s2"));
    assertEquals(List.of(), measurements.commit(false).piiFindings(),
        "a number that is no phone, one with a fraction and a hex token stay clean");
  }

  @Test
  void theTaskKeyDigestIsNotTakenForAPhoneNumber(@TempDir Path dir) throws Exception {
    String digest = "6162c270b19592737038efc8315a0dd0c88cdbd9bc53642ec67d2c6af0494d58";
    // Its hex holds a phone-shaped run (…19592737038…), but a standalone hex token is opaque.
    JsonlFile out = new JsonlFile(dir.resolve("rl.jsonl"));
    out.write("{\"prompt\":\"what is the refund policy 307?\",\"metadata\":{\"taskId\":\"prompt:" + digest + "\"}}",
        List.of("s1"));
    JsonlFile.Written clean = out.commit(false);
    assertEquals(List.of(), clean.piiFindings());
    assertTrue(Files.exists(clean.path()));

    JsonlFile raw = new JsonlFile(dir.resolve("rl2.jsonl"));
    raw.write("{\"prompt\":\"call 13812345678\",\"metadata\":{\"taskId\":\"prompt:" + digest + "\"}}",
        List.of("s2"));
    assertEquals(List.of("phone: 1 line"), raw.commit(false).piiFindings(), "the rest of the line is still scanned");
  }

  /**
   * Trajectories journaled before bank_card, iban and secret existed (or with desensitization off)
   * hold them raw: the final scan names each and the file is not left behind.
   */
  @Test
  void theFinalScanFindsCardsIbansAndKeys(@TempDir Path dir) throws Exception {
    JsonlFile out = new JsonlFile(dir.resolve("sft.jsonl"));
    out.write("{\"messages\":[{\"role\":\"user\",\"content\":\"card 4111 1111 1111 1111\"}]}", List.of("s1"));
    out.write("{\"messages\":[{\"role\":\"user\",\"content\":\"iban DE89 3704 0044 0532 0130 00, key "
        + "AKIA" + "IOSFODNN7EXAMPLE\"}]}", List.of("s2"));
    out.write("{\"messages\":[{\"role\":\"user\",\"content\":\"order 1733126400000, task-based\"}]}", List.of("s3"));
    JsonlFile.Written w = out.commit(false);
    assertEquals(List.of("bank_card: 1 line", "iban: 1 line", "secret: 1 line"), w.piiFindings());
    assertEquals(List.of(), names(dir));
  }

  /**
   * Review t160: the final scan read "\n" in a JSON line as a backslash and an 'n', so a PEM key, an
   * Authorization header, a card or an IBAN right after an escaped line break was no finding, and a journal an earlier build
   * wrote with such text raw was exported. The strings are scanned decoded too.
   */
  @Test
  void aKeyOrCredentialAfterAnEscapedLineBreakIsFound(@TempDir Path dir) throws Exception {
    StringBuilder line = new StringBuilder();
    while (line.length() < 64) line.append("Qk7x7Zp+/Rt");
    String key = "-----BEGIN " + "PRIVATE KEY-----\\n" + line.substring(0, 64) + "\\n" + line.substring(0, 40)
        + "\\n-----END " + "PRIVATE KEY-----";
    String basic = java.util.Base64.getEncoder().encodeToString("deploy:Tr0ub4dor&3".getBytes());
    JsonlFile out = new JsonlFile(dir.resolve("sft.jsonl"));
    out.write("{\"messages\":[{\"role\":\"tool\",\"content\":\"config:\\n" + key + "\\n\"}]}", List.of("s1"));
    out.write("{\"messages\":[{\"role\":\"tool\",\"content\":\"HTTP/1.1 401\\nAuthorization: Basic " + basic
        + "\\nretrying\"}]}", List.of("s2"));
    out.write("{\"messages\":[{\"role\":\"user\",\"content\":\"line one\\nline \\\"two\\\"\"}]}", List.of("s3"));
    // a card and an IBAN on lines of their own were missed the same way (the letter before them)
    out.write("{\"messages\":[{\"role\":\"tool\",\"content\":\"card:\\n4111 1111 1111 1111\\niban:\\n"
        + "DE89 3704 0044 0532 0130 00\"}]}", List.of("s4"));
    JsonlFile.Written w = out.commit(false);
    assertEquals(List.of("bank_card: 1 line", "iban: 1 line", "secret: 2 lines"), w.piiFindings());
    assertEquals(List.of(), names(dir), "the file is not kept");
  }

  /**
   * Trial t165: a line holding what the node's rules take (stored raw by an earlier build's) is desensitized by
   * them as it is written and is no finding; with desensitizing off it stays a finding.
   */
  @Test
  void aLineTheNodesRulesTakeIsDesensitizedAsWritten(@TempDir Path dir) throws Exception {
    String raw = "{\"messages\":[{\"role\":\"tool\",\"content\":\"DB_PASS=hunter2secret1\\nMAIL=ann@example.com\"}]}";
    JsonlFile out = new JsonlFile(dir.resolve("sft.jsonl"), Desensitizer.builtInScanner());
    out.write(raw, List.of("s1"));
    out.write("{\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}", List.of("s2"));
    JsonlFile.Written w = out.commit(false);
    assertEquals(List.of(), w.piiFindings());
    assertEquals(1, out.desensitized());
    assertEquals(List.of("{\"messages\":[{\"role\":\"tool\",\"content\":\"DB_PASS=[SECRET]\\nMAIL=[EMAIL]\"}]}",
        "{\"messages\":[{\"role\":\"user\",\"content\":\"hello\"}]}"), Files.readAllLines(w.path()));

    JsonlFile off = new JsonlFile(dir.resolve("off.jsonl"), new Desensitizer(false, List.of(), List.of()));
    off.write(raw, List.of("s1"));
    assertEquals(List.of("email: 1 line", "secret: 1 line"), off.commit(false).piiFindings());
  }

  /**
   * Review t166: a reward or quality with a long fraction (6/11 = 0.5454545454545454) passes a card's Luhn check,
   * and the final scan refused the whole file for it; a whole number written as a float is still read.
   */
  @Test
  void aFractionIsNoCardButAWholeNumberIsStillRead(@TempDir Path dir) throws Exception {
    JsonlFile out = new JsonlFile(dir.resolve("rl.jsonl"));
    out.write("{\"prompt\":\"q\",\"reward\":0.5454545454545454,\"quality\":0.2500000000000001}", List.of("s1"));
    out.write("{\"prompt\":\"q\",\"reward\":0.5499999999999998}", List.of("s2"));
    assertEquals(List.of(), out.commit(false).piiFindings());

    JsonlFile phone = new JsonlFile(dir.resolve("phone.jsonl"));
    phone.write("{\"prompt\":\"q\",\"reward\":0.5454545454545454,\"tool\":{\"num\":13812345678.0}}", List.of("s3"));
    assertEquals(List.of("phone: 1 line"), phone.commit(false).piiFindings());
  }
}
