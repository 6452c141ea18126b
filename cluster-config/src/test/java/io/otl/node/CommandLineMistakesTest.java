package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mistakes an operator made on the command line in trial t175, each a usage error (exit 2) that says
 * what is wrong, with nothing written: a folder given as {@code --config} was exit 1 "Invalid
 * configuration" where a missing file is exit 2 (docs/configuration.md), and an audit with one
 * argument too many said only "expected &lt;kind&gt; &lt;id&gt;", though both were there.
 */
class CommandLineMistakesTest {

  @TempDir
  Path dir;

  @Test
  void aFolderAsConfigIsAUsageErrorOfEveryCommand() throws Exception {
    Path folder = Files.createDirectory(dir.resolve("config"));
    String expected = "--config " + folder + " is a folder: name the config file in it";
    Run audit = audit(List.of("model", "bot1", "--config", folder.toString()));
    assertEquals(2, audit.code, audit.err);
    assertTrue(audit.err.startsWith("error: " + expected + "\n"), audit.err);
    Run export = export(List.of("--agent", "bot1", "--format", "sft", "--config", folder.toString(),
        "--out", dir.resolve("out").toString()));
    assertEquals(2, export.code, export.err);
    assertTrue(export.err.contains("error: " + expected + "\n"), export.err);
    assertEquals(List.of("config"), listing(dir), "nothing written");
  }

  /** An option followed by another option took that one as its value ("--as-of --format is not an ISO-8601 time"). */
  @Test
  void anAuditOptionFollowedByAnotherOptionNeedsAValue() {
    Run audit = audit(List.of("session", "s-1", "--as-of", "--format", "json"));
    assertEquals(2, audit.code, audit.err);
    assertTrue(audit.err.startsWith("error: --as-of needs a value; it is followed by the option --format\n"), audit.err);
  }

  @Test
  void anAuditWithAnArgumentTooManyNamesIt() {
    Run audit = audit(List.of("model", "bot1", "extra"));
    assertEquals(2, audit.code, audit.err);
    assertTrue(audit.err.startsWith("error: one <kind> <id> at a time; unexpected argument 'extra'\n"), audit.err);
  }

  /**
   * {@code audit lineage model bot1}, the API's {@code /v1/audit/lineage/model/bot1} typed as a command, was
   * answered "one <kind> <id> at a time; unexpected argument 'bot1'": the kind is what is wrong, so it is named
   * first, with where lineage is read (trial trial-loop).
   */
  @Test
  void anAuditOfAnUnknownKindNamesTheKindBeforeCountingArguments() {
    Run audit = audit(List.of("lineage", "model", "bot1"));
    assertEquals(2, audit.code, audit.err);
    assertTrue(audit.err.startsWith("error: kind is 'lineage'; allowed: "), audit.err);
    assertTrue(audit.err.contains("GET /v1/audit/lineage/"), audit.err);
  }

  /**
   * A file given as {@code --out} was found only when the export wrote, after reading the journal: exit 1
   * "cannot write …/x.jsonl: … exists and is not a folder" (or "the export through the node failed").
   */
  @Test
  void aFileAsOutIsAUsageErrorNamingIt() throws Exception {
    Path file = Files.writeString(dir.resolve("exports"), "kept");
    for (Path out : List.of(file, file.resolve("sub"))) {
      Run export = export(List.of("--agent", "bot1", "--format", "sft", "--out", out.toString()));
      assertEquals(2, export.code, export.err);
      String expected = out.equals(file) ? "error: --out " + file + ": is a file, not a folder"
          : "error: --out " + out + ": " + file + " is a file, so no folder can be made under it";
      assertTrue(export.err.startsWith(expected), export.err);
      assertTrue(export.err.contains("usage: java -jar otl-node.jar export"), export.err);
    }
    assertEquals("kept", Files.readString(file), "the file is left as it was");
    assertEquals(List.of("exports"), listing(dir), "nothing written");
  }

  /**
   * "An option given twice exits 2" (README) held for every option with a value, not for the flag: trial
   * "trial" gave {@code --allow-pii --allow-pii} and the export ran.
   */
  @Test
  void theFlagGivenTwiceIsAUsageErrorToo() throws Exception {
    Run export = export(List.of("--agent", "bot1", "--format", "sft", "--allow-pii", "--out",
        dir.resolve("out").toString(), "--allow-pii"));
    assertEquals(2, export.code, export.err);
    assertTrue(export.err.startsWith("error: --allow-pii is given twice; give it once\n"), export.err);
    assertEquals(List.of(), listing(dir), "nothing written");
  }

  private record Run(int code, String out, String err) {}

  private static Run audit(List<String> args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = AuditCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static Run export(List<String> args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int code = ExportCommand.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8), Map.of());
    return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  private static List<String> listing(Path folder) throws Exception {
    try (var files = Files.list(folder)) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }
}
