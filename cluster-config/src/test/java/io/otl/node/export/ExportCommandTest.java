package io.otl.node.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.ConsoleAppender;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.node.ExportCommand;
import io.otl.node.TrainingNode;
import io.otl.node.readside.FeedTestSupport;
import io.otl.node.testing.TestDatabases;
import io.otl.node.testing.ToolRun;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** {@code otl-node.jar export} against an H2 journal written by a node that is no longer running. */
class ExportCommandTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static Path work;
  private static Path config;

  @BeforeAll
  static void writeJournal() throws Exception {
    work = Files.createTempDirectory("otl-export-cli-");
    var db = TestDatabases.h2(work.resolve("db"));
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(db, false))) {
      FeedTestSupport.completedSessions(node.dataCollector(), "cli", "agent-c", 5);
    }
    config = TestDatabases.toolsConfig(db, work.resolve("node.conf"));
  }

  @Test
  void exportsAnAgentsWindowFromTheJournalWithoutARunningNode() throws Exception {
    Path out = work.resolve("out");
    ToolRun r = ToolRun.export("export", "--agent", "agent-c", "--format", "rl", "--since", "2000-01-01", "--until",
        "2999-01-01T00:00:00Z", "--out", out.toString(), "--config", config.toString());
    assertEquals(0, r.code(), r.err());
    String name = "agent-c-rl-20000101T000000Z-29990101T000000Z";
    Path file = out.resolve(name + ".jsonl");
    Path manifest = out.resolve(name + ".manifest.json");
    assertTrue(r.out().contains("manifest: " + manifest), r.out());
    assertTrue(r.out().contains("count:    5"), r.out());
    JsonNode m = JSON.readTree(manifest.toFile());
    assertTrue(r.out().contains("sha256:   " + m.get("sha256").asText()), r.out());
    assertEquals(5, Files.readAllLines(file).size());
    assertEquals("rl", m.get("format").asText());
  }

  @Test
  void anExportThatSelectsNothingExitsThreeWithTheCountsAndLeavesNoFile() throws Exception {
    Path out = work.resolve("out-empty");
    // Five sessions, each the only answer to its question: no DPO pair can be made.
    ToolRun r = ToolRun.export("export", "--agent", "agent-c", "--format", "dpo", "--out", out.toString(),
        "--name", "none",
        "--config", config.toString());
    assertEquals(3, r.code(), r.out() + r.err());
    assertTrue(r.err().contains("nothing to export, no file written: 5 seen: 5 dpo-only-answer-to-its-task"), r.err());
    assertTrue(!Files.exists(out.resolve("none.jsonl")) && !Files.exists(out.resolve("none.manifest.json")));
    // An agent the journal does not know (a typo, another case), or a window without completions: it read
    // "0 seen: none excluded", as if the filters had passed everything (trial t73).
    ToolRun unknown = ToolRun.export("export", "--agent", "Agent-C", "--format", "sft", "--out", out.toString(),
        "--config", config.toString());
    assertEquals(3, unknown.code(), unknown.out() + unknown.err());
    assertTrue(unknown.err().startsWith("error: nothing to export, no file written: 0 seen: the journal has no session"
        + " of agent Agent-C completed (agent ids are case-sensitive)"), unknown.err());
    ToolRun window = ToolRun.export("export", "--agent", "agent-c", "--format", "sft", "--out", out.toString(),
        "--since", "2000-01-01", "--until", "2000-01-02T08:00:00+08:00", "--config", config.toString());
    assertEquals(3, window.code(), window.out() + window.err());
    assertTrue(window.err().contains("0 seen: the journal has no session of agent agent-c completed at or after "
        + "2000-01-01T00:00:00Z and before 2000-01-02T00:00:00Z"), window.err());
  }

  @Test
  void wrongUsageExitsWithTwoAndSaysWhatToFix() throws Exception {
    ToolRun badFormat = ToolRun.export("export", "--agent", "agent-c", "--format", "csv", "--config",
        config.toString());
    assertEquals(2, badFormat.code());
    assertTrue(badFormat.err().contains("format 'csv' is unknown; allowed: sft, dpo, rl"), badFormat.err());
    // An algorithm's name is the likely mistake: it names the format that algorithm trains on (trial t89).
    ToolRun algorithm = ToolRun.export("export", "--agent", "agent-c", "--format", "grpo", "--config",
        config.toString());
    assertEquals(2, algorithm.code());
    assertTrue(algorithm.err().contains("format 'grpo' is unknown; allowed: sft, dpo, rl (grpo jobs train on the rl "
        + "format: give rl)"), algorithm.err());
    ToolRun badDate = ToolRun.export("--agent", "agent-c", "--format", "sft", "--since", "yesterday",
        "--config", config.toString());
    assertEquals(2, badDate.code());
    assertTrue(badDate.err().contains("--since yesterday is not an ISO-8601 time"), badDate.err());
    // A local time is ISO-8601 too: what it lacks is the zone (it read "is not an ISO-8601 time", trial t73).
    ToolRun noZone = ToolRun.export("--agent", "agent-c", "--format", "sft", "--until", "2026-11-01T08:00:00",
        "--out", work.resolve("out-no-zone").toString(), "--config", config.toString());
    assertEquals(2, noZone.code(), noZone.out() + noZone.err());
    assertTrue(noZone.err().startsWith("error: --until 2026-11-01T08:00:00 has no time zone: add Z for UTC or the "
        + "offset of yours, e.g. 2026-11-01T08:00:00Z or 2026-11-01T08:00:00+08:00\n"), noZone.err());
    assertFalse(Files.exists(work.resolve("out-no-zone")), "nothing written");
    ToolRun auditNoZone = ToolRun.audit("session", "s-1", "--as-of", "2026-11-01T08:00", "--config", config.toString());
    assertEquals(2, auditNoZone.code(), auditNoZone.err());
    assertTrue(auditNoZone.err().contains("--as-of 2026-11-01T08:00 has no time zone"), auditNoZone.err());
    ToolRun reversed = ToolRun.export("--agent", "agent-c", "--format", "sft", "--since", "2026-02-01",
        "--until", "2026-01-01");
    assertEquals(2, reversed.code());
    assertTrue(reversed.err().contains("must be before --until"), reversed.err());
    ToolRun noAgent = ToolRun.export("--format", "sft");
    assertEquals(2, noAgent.code());
    assertTrue(noAgent.err().contains("--agent is required"), noAgent.err());
    ToolRun unknown = ToolRun.export("--agent", "a", "--format", "sft", "--verbose");
    assertEquals(2, unknown.code());
    assertTrue(unknown.err().contains("unknown option for export: --verbose"), unknown.err());
    // An option given twice: the last one won ("--format sft … --format dpo" exported dpo).
    ToolRun twice = ToolRun.export("--agent", "agent-c", "--format", "sft", "--out", work.resolve("out-twice").toString(),
        "--format", "dpo", "--config", config.toString());
    assertEquals(2, twice.code(), twice.out() + twice.err());
    assertTrue(twice.err().contains("--format is given twice; give it once"), twice.err());
    assertFalse(Files.exists(work.resolve("out-twice")), "nothing written");
    for (String folder : new String[] {"-", " "}) {
      ToolRun dash = ToolRun.export("--agent", "agent-c", "--format", "sft", "--out", folder, "--config",
          config.toString());
      assertEquals(2, dash.code(), dash.out() + dash.err());
      assertTrue(dash.err().contains("is not a folder"), dash.err());
    }
    assertFalse(Files.exists(Path.of("-")), "no folder named -");
    ToolRun noValue = ToolRun.export("--agent", "agent-c", "--format", "sft", "--out", "--name", "x", "--config",
        config.toString());
    assertEquals(2, noValue.code(), noValue.out() + noValue.err());
    assertTrue(noValue.err().contains("--out needs a value; it is followed by the option --name"), noValue.err());
    assertFalse(Files.exists(Path.of("--name")), "no folder named --name");
    Path out = work.resolve("out-names");
    for (String name : new String[] {"../escaped", "sub/dir", ""}) {
      ToolRun badName = ToolRun.export("--agent", "agent-c", "--format", "rl", "--out", out.toString(), "--name", name,
          "--config", config.toString());
      assertEquals(2, badName.code(), name + ": " + badName.err());
      assertTrue(badName.err().contains("--name"), badName.err());
    }
    assertFalse(Files.exists(out) || Files.exists(work.resolve("escaped.jsonl")), "nothing written");
  }

  /**
   * {@code java -jar otl-node.jar export … | grep ^file:}: stdout carries the result only. The jar logs
   * at INFO to the console (otl-logback.xml), and the export's ActorSystem logged its start there,
   * ahead of {@code manifest:}.
   */
  @Test
  void theCommandLinePrintsOnlyTheResultOnStdout() throws Exception {
    LoggerContext ctx = (LoggerContext) LoggerFactory.getILoggerFactory();
    Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    Logger pekko = ctx.getLogger("org.apache.pekko");
    Level rootLevel = root.getLevel();
    Level pekkoLevel = pekko.getLevel();
    PrintStream stdout = System.out;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    int code;
    try {
      // As the jar's own logging configures it.
      root.setLevel(Level.INFO);
      pekko.setLevel(Level.INFO);
      System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
      code = ExportCommand.run(List.of("export", "--agent", "agent-c", "--format", "rl", "--out",
          work.resolve("out-stdout").toString(), "--name", "piped", "--config", config.toString()));
    } finally {
      System.setOut(stdout);
      root.setLevel(rootLevel);
      pekko.setLevel(pekkoLevel);
      consolesTo(root, "System.out");
    }
    String out = captured.toString(StandardCharsets.UTF_8);
    assertEquals(0, code, out);
    List<String> lines = out.lines().toList();
    assertTrue(lines.get(0).startsWith("manifest: "), "the first line of stdout:\n" + out);
    for (String line : lines) {
      assertTrue(line.matches("(manifest|file|count|sha256|sessions|skipped|journal): .*"), "not a result line: " + line);
    }
  }

  private static void consolesTo(Logger root, String target) {
    for (var it = root.iteratorForAppenders(); it.hasNext(); ) {
      Appender<?> a = it.next();
      if (a instanceof ConsoleAppender<?> console) {
        console.stop();
        console.setTarget(target);
        console.start();
      }
    }
  }
}
