package io.otl.node.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.api.DataCollector;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionInput;
import io.otl.core.session.SessionModel.Role;
import io.otl.node.TrainingNode;
import io.otl.node.readside.FeedTestSupport;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.export.DatasetExport;
import io.otl.persistence.export.ExportFilters;
import io.otl.persistence.export.ExportFormat;
import io.otl.persistence.export.ExportResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Dataset export on the real journal, run once per database. */
abstract class DatasetExportContract {
  private static final ObjectMapper JSON = new ObjectMapper();
  /** Filters that let every completed session through: these tests are about shapes and streaming. */
  private static final ExportFilters EVERYTHING = new ExportFilters(-1.0, 0.0, 1e-9);

  /** Node overrides selecting this contract's database; a fresh, empty journal each call. */
  protected abstract Config database() throws Exception;

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(120, TimeUnit.SECONDS);
  }

  /** Sessions of agent-x in pairs of prompts with different rewards, and some that must be left out. */
  private static List<String> writeScenario(DataCollector dc) throws Exception {
    List<CompletableFuture<?>> w = new ArrayList<>();
    for (int k = 0; k < 3; k++) {
      w.add(FeedTestSupport.session(dc, "p" + k + "-s", "agent-x", "question " + k, "good " + k, true)
          .toCompletableFuture());
      String prompt = k == 1 ? "  QUESTION \t 1 " : "question " + k; // normalised, the same prompt
      w.add(FeedTestSupport.session(dc, "p" + k + "-f", "agent-x", prompt, "bad " + k, false).toCompletableFuture());
    }
    w.add(FeedTestSupport.session(dc, "p3-s", "agent-x", "question 3", "same a", true).toCompletableFuture());
    w.add(FeedTestSupport.session(dc, "p3-s2", "agent-x", "question 3", "same b", true).toCompletableFuture());
    w.add(FeedTestSupport.session(dc, "solo", "agent-x", "only once", "alone", true).toCompletableFuture());
    w.add(FeedTestSupport.session(dc, "other-1", "agent-y", "question 0", "other agent", true).toCompletableFuture());
    w.add(FeedTestSupport.session(dc, "open-x", "agent-x", "question 0", "still open", null).toCompletableFuture());
    CompletableFuture.allOf(w.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
    return List.of("p0-s", "p0-f", "p1-f", "p1-s", "p2-s", "p2-f", "p3-s", "p3-s2", "solo", "other-1", "open-x",
        "never-written");
  }

  @Test
  void exportedSftDpoAndRlFilesParseBackToTheTrajectoriesWithAMatchingManifest() throws Exception {
    Path dir = Files.createTempDirectory("otl-export-");
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(database(), false))) {
      DataCollector dc = node.dataCollector();
      List<String> ids = writeScenario(dc);
      List<String> exported = ids.subList(0, 9); // completed sessions of agent-x, in the given order
      DatasetExport export = new DatasetExport(node.system(), 4, Clock.systemUTC(), EVERYTHING);

      // SFT
      ExportResult sft = get(export.forSessions("agent-x", ids, ExportFormat.SFT, dir, "job-sft"));
      assertEquals(exported, sft.sessionIds());
      assertEquals(9, sft.count());
      assertManifest(sft, "agent-x", "sft");
      List<JsonNode> lines = read(sft.path());
      for (int i = 0; i < lines.size(); i++) {
        AgentSession.State s = get(dc.trajectory(exported.get(i))).orElseThrow();
        JsonNode messages = lines.get(i).get("messages");
        List<String> plain = new ArrayList<>();
        for (JsonNode m : messages) if (!m.has("tool_calls") && !m.get("role").asText().equals("tool")) {
          plain.add(m.get("role").asText() + ":" + m.get("content").asText());
        }
        assertEquals(s.messages().stream().map(m -> m.role() + ":" + m.content()).toList(), plain);
        assertEquals("search", messages.get(1).get("tool_calls").get(0).get("function").get("name").asText());
        assertEquals(s.toolCalls().get(0).input(), messages.get(1).get("tool_calls").get(0).get("function")
            .get("arguments"), "arguments are the input object itself");
        assertEquals("call-1", messages.get(2).get("tool_call_id").asText());
        assertEquals(s.toolCalls().get(0).output().toString(), messages.get(2).get("content").asText());
        JsonNode tools = lines.get(i).get("tools");
        assertTrue(tools.isArray(), "tools is a JSON array, as chat templates take it");
        assertEquals("search", tools.get(0).get("function").get("name").asText());
      }
      // the same export twice gives the same bytes
      ExportResult again = get(export.forSessions("agent-x", ids, ExportFormat.SFT, dir, "job-sft-again"));
      assertEquals(-1L, Files.mismatch(Path.of(sft.path()), Path.of(again.path())));
      assertEquals(sft.sha256(), again.sha256());

      // RL
      ExportResult rl = get(export.forSessions("agent-x", ids, ExportFormat.RL, dir, "job-rl"));
      assertEquals(exported, rl.sessionIds());
      assertManifest(rl, "agent-x", "rl");
      List<JsonNode> rlLines = read(rl.path());
      for (int i = 0; i < rlLines.size(); i++) {
        AgentSession.State s = get(dc.trajectory(exported.get(i))).orElseThrow();
        JsonNode l = rlLines.get(i);
        assertEquals(s.messages().stream().filter(m -> m.role() == Role.user).findFirst().orElseThrow().content(),
            l.get("prompt").asText());
        assertEquals(s.reward(), l.get("reward").asDouble());
        assertEquals(exported.get(i), l.get("metadata").get("sessionId").asText());
        assertEquals("agent-x", l.get("metadata").get("agentId").asText());
        assertEquals("v1", l.get("metadata").get("modelVersion").asText());
        assertEquals(s.qualityScore(), l.get("metadata").get("qualityScore").asDouble());
      }

      // DPO: one line per prompt with different rewards, in order of first appearance
      ExportResult dpo = get(export.forSessions("agent-x", ids, ExportFormat.DPO, dir, "job-dpo"));
      assertManifest(dpo, "agent-x", "dpo");
      assertEquals(3, dpo.count());
      assertEquals(List.of("p0-s", "p0-f", "p1-s", "p1-f", "p2-s", "p2-f"), dpo.sessionIds());
      List<JsonNode> pairs = read(dpo.path());
      for (int k = 0; k < 3; k++) {
        assertEquals("question " + k, pairs.get(k).get("prompt").asText());
        assertEquals("good " + k, pairs.get(k).get("chosen").asText());
        assertEquals("bad " + k, pairs.get(k).get("rejected").asText());
        // Each pair names its two sessions, as an RL task names its one.
        assertEquals("p" + k + "-s", pairs.get(k).get("metadata").get("chosenSessionId").asText(), pairs.get(k).toString());
        assertEquals("p" + k + "-f", pairs.get(k).get("metadata").get("rejectedSessionId").asText(), pairs.get(k).toString());
        double chosen = get(dc.trajectory("p" + k + "-s")).orElseThrow().reward();
        double rejected = get(dc.trajectory("p" + k + "-f")).orElseThrow().reward();
        assertTrue(chosen > rejected);
      }
    }
  }

  @Test
  void aTimeWindowSelectsTheAgentsSessionsByCompletionTime() throws Exception {
    Path dir = Files.createTempDirectory("otl-export-");
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(database(), false))) {
      DataCollector dc = node.dataCollector();
      List<String> early = FeedTestSupport.completedSessions(dc, "early", "agent-w", 4);
      FeedTestSupport.completedSessions(dc, "noise", "agent-v", 2);
      Thread.sleep(20);
      Instant mid = Instant.now();
      Thread.sleep(20);
      List<String> late = FeedTestSupport.completedSessions(dc, "late", "agent-w", 3);
      DatasetExport export = new DatasetExport(node.system(), 4, Clock.systemUTC(), EVERYTHING);
      ExportResult after = get(export.forWindow("agent-w", mid, null, ExportFormat.RL, dir, "after"));
      assertEquals(new HashSet<>(late), new HashSet<>(after.sessionIds()));
      assertEquals(3, after.count());
      ExportResult before = get(export.forWindow("agent-w", null, mid, ExportFormat.RL, dir, "before"));
      assertEquals(new HashSet<>(early), new HashSet<>(before.sessionIds()));
      ExportResult all = get(export.forWindow("agent-w", null, null, ExportFormat.SFT, dir, "all"));
      assertEquals(7, all.count());
      ExportResult allAgain = get(export.forWindow("agent-w", null, null, ExportFormat.SFT, dir, "all-again"));
      assertEquals(all.sessionIds(), allAgain.sessionIds());
      assertEquals(-1L, Files.mismatch(Path.of(all.path()), Path.of(allAgain.path())));
    }
  }

  /**
   * The window reads the server's clock, the session's {@code completedAt}, not the client's {@code at}
   * of its result: a producer replaying a backlog, or with its clock off, dates its events as it likes,
   * and the Kafka {@code trajectories} record carries that date as its {@code at}. Trial t99 exported a
   * session whose result said 01:00 with {@code --until 01:30} and got nothing, which the docs did not
   * explain; they now say which clock the window reads.
   */
  @Test
  void theWindowReadsWhenTheCompletionWasRecordedNotTheClientsDateOfTheResult() throws Exception {
    Path dir = Files.createTempDirectory("otl-export-");
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(database(), false))) {
      DataCollector dc = node.dataCollector();
      Instant before = Instant.now();
      Instant old = Instant.parse("2020-01-01T00:00:00Z");
      get(dc.record("backdated", "agent-b", List.of(
          new SessionInput.Message("u1", old, "user", "question", null, null),
          new SessionInput.Message("a1", old, "assistant", "answer", null, null),
          new SessionInput.Result("res", old, "SUCCESS", null))));
      DatasetExport export = new DatasetExport(node.system(), 4, Clock.systemUTC(), EVERYTHING);
      ExportResult recordedWindow = get(export.forWindow("agent-b", before, null, ExportFormat.RL, dir, "recorded"));
      assertEquals(List.of("backdated"), recordedWindow.sessionIds());
      ExportResult clientWindow = get(export.forWindow("agent-b", old.minusSeconds(3600), old.plusSeconds(3600),
          ExportFormat.RL, dir, "client"));
      assertEquals(0, clientWindow.count());
      assertEquals(0, clientWindow.seen());
    }
  }

  @Test
  void theFinalScanReportsPersonalDataThatEscapedDesensitization() throws Exception {
    Path dir = Files.createTempDirectory("otl-export-");
    Config unredacted = ConfigFactory.parseString(
        "agentscope.training.data-collector.desensitize.enabled = false").withFallback(database());
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(unredacted, false))) {
      DataCollector dc = node.dataCollector();
      get(FeedTestSupport.session(dc, "pii-1", "agent-p", "please mail carol.jones@example.org", "done", true));
      get(FeedTestSupport.session(dc, "clean-1", "agent-p", "hello", "hi", true));
      ExportResult r = get(new DatasetExport(node.system(), 4, Clock.systemUTC(), EVERYTHING)
          .forSessions("agent-p", List.of("pii-1", "clean-1"), ExportFormat.SFT, dir, "pii"));
      assertEquals(List.of("email: 1 line"), r.piiFindings());
      String manifest = Files.readString(Path.of(r.manifestPath()));
      assertTrue(manifest.contains("email: 1 line"));
      assertFalse(manifest.contains("carol.jones"), "the manifest never shows the matched text");
      assertFalse(r.fileWritten());
      assertFalse(Files.exists(Path.of(r.path())), "a file with PII is not left behind");
      assertFalse(Files.exists(Path.of(r.path()).resolveSibling("." + Path.of(r.path()).getFileName() + ".tmp")));
      ExportResult kept = get(new DatasetExport(node.system()).allowingPii()
          .forSessions("agent-p", List.of("pii-1", "clean-1"), ExportFormat.SFT, dir, "pii-allowed"));
      assertTrue(kept.fileWritten() && Files.exists(Path.of(kept.path())), "kept when PII is allowed explicitly");
      assertEquals(List.of("email: 1 line"), kept.piiFindings());
    }
  }

  /**
   * Review t160: a journal holding a tool's output raw (an earlier build, or desensitization off) with an
   * Authorization header or a PEM key on a line of its own was exported: in the JSON line the text follows
   * an escaped "\n", which the final scan read as a letter. It is found, and the file is refused.
   */
  @Test
  void theFinalScanFindsACredentialAfterAnEscapedLineBreak() throws Exception {
    Path dir = Files.createTempDirectory("otl-export-");
    Config unredacted = ConfigFactory.parseString(
        "agentscope.training.data-collector.desensitize.enabled = false").withFallback(database());
    StringBuilder line = new StringBuilder();
    while (line.length() < 64) line.append("Qk7x7Zp+/Rt");
    String basic = java.util.Base64.getEncoder().encodeToString("deploy:Tr0ub4dor&3".getBytes());
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(unredacted, false))) {
      DataCollector dc = node.dataCollector();
      String header = "HTTP/1.1 401\nAuthorization: Basic " + basic;
      String key = "config:\n-----BEGIN " + "PRIVATE KEY-----\n" + line.substring(0, 64) + "\n" + line.substring(0, 40)
          + "\n-----END " + "PRIVATE KEY-----";
      get(FeedTestSupport.session(dc, "auth-1", "agent-k", "why 401?", header, true));
      get(FeedTestSupport.session(dc, "pem-1", "agent-k", "show the config", key, true));
      get(FeedTestSupport.session(dc, "clean-k", "agent-k", "hello", "line one\nline two", true));
      ExportResult r = get(new DatasetExport(node.system(), 4, Clock.systemUTC(), EVERYTHING)
          .forSessions("agent-k", List.of("auth-1", "pem-1", "clean-k"), ExportFormat.SFT, dir, "escaped"));
      assertEquals(List.of("secret: 2 lines"), r.piiFindings());
      assertFalse(r.fileWritten());
      assertFalse(Files.exists(Path.of(r.path())), "a file with a credential is not left behind");
    }
  }

  /**
   * Trial t165: sessions are desensitized when stored, by that build's rules; a journal an earlier build wrote
   * holds raw what a later build's rules take, and the final scan failed the first job after the upgrade
   * (its trajectories with it). A line the scan finds something in is desensitized by the node's own rules
   * first; only what those leave counts. Here the earlier build is a node without the secret rule.
   */
  @Test
  void linesStoredRawUnderEarlierRulesAreDesensitizedByTheNodesRules() throws Exception {
    Path dir = Files.createTempDirectory("otl-export-");
    Config db = database();
    Config withoutSecretRule = ConfigFactory.parseString(
        "agentscope.training.data-collector.desensitize.patterns = [phone, id_card, email, bank_card, iban]")
        .withFallback(db);
    String key = "sk-proj-" + "Qk7x7ZpRt9aB3cD4eF5gH6iJ7kL8mN9oP0qR";
    try (TrainingNode earlier = TrainingNode.start(TestDatabases.node(withoutSecretRule, false))) {
      DataCollector dc = earlier.dataCollector();
      get(FeedTestSupport.session(dc, "raw-1", "agent-u", "which key?", "use " + key + " for the API", true));
      get(FeedTestSupport.session(dc, "clean-u", "agent-u", "hello", "hi", true));
      ExportResult before = get(new DatasetExport(earlier.system(), 4, Clock.systemUTC(), EVERYTHING)
          .forSessions("agent-u", List.of("raw-1", "clean-u"), ExportFormat.SFT, dir, "before"));
      assertEquals(List.of("secret: 1 line"), before.piiFindings(), "that node's rules leave the key: refused");
      assertFalse(before.fileWritten());
    }
    try (TrainingNode upgraded = TrainingNode.start(TestDatabases.node(db, false))) {
      ExportResult r = get(new DatasetExport(upgraded.system(), 4, Clock.systemUTC(), EVERYTHING)
          .forSessions("agent-u", List.of("raw-1", "clean-u"), ExportFormat.SFT, dir, "after"));
      assertEquals(List.of(), r.piiFindings());
      assertTrue(r.fileWritten());
      String written = Files.readString(Path.of(r.path()));
      assertEquals(2, written.lines().count());
      assertFalse(written.contains(key), written);
      assertTrue(written.contains("use [SECRET] for the API"), written);
      assertTrue(get(upgraded.dataCollector().trajectory("raw-1")).orElseThrow().toString().contains(key),
          "the journal keeps what was stored");
    }
  }

  @Test
  void exportsTwoThousandSessionsAsAStream() throws Exception {
    Path dir = Files.createTempDirectory("otl-export-");
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(database(), false))) {
      FeedTestSupport.completedSessions(node.dataCollector(), "bulk", "agent-b", 2000);
      long t0 = System.nanoTime();
      ExportResult r = get(new DatasetExport(node.system(), 4, Clock.systemUTC(), EVERYTHING)
          .forWindow("agent-b", null, null, ExportFormat.SFT, dir, "bulk"));
      long ms = (System.nanoTime() - t0) / 1_000_000;
      System.out.println("exported " + r.count() + " sessions in " + ms + " ms (" + getClass().getSimpleName() + ")");
      assertEquals(2000, r.count());
      assertEquals(2000, new HashSet<>(r.sessionIds()).size());
      assertManifest(r, "agent-b", "sft");
    }
  }

  private static List<JsonNode> read(String path) throws Exception {
    List<JsonNode> out = new ArrayList<>();
    for (String line : Files.readAllLines(Path.of(path))) out.add(JSON.readTree(line));
    return out;
  }

  private static void assertManifest(ExportResult r, String agentId, String format) throws Exception {
    byte[] bytes = Files.readAllBytes(Path.of(r.path()));
    String sha = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    assertEquals(sha, r.sha256(), "the result's sha256 is the file's");
    assertEquals(r.count(), Files.readAllLines(Path.of(r.path())).size());
    JsonNode m = JSON.readTree(Path.of(r.manifestPath()).toFile());
    assertEquals(List.of("agentId", "format", "count", "sha256", "sessionIds", "createdAt", "piiFindings", "seen",
            "exclusions", "skipped"),
        iterable(m.fieldNames()));
    assertEquals(0, m.get("skipped").size(), "nothing skipped: " + m.get("skipped"));
    assertEquals(agentId, m.get("agentId").asText());
    assertEquals(format, m.get("format").asText());
    assertEquals(r.count(), m.get("count").asInt());
    assertEquals(sha, m.get("sha256").asText(), "the manifest's sha256 is the file's");
    List<String> ids = new ArrayList<>();
    m.get("sessionIds").forEach(n -> ids.add(n.asText()));
    assertEquals(r.sessionIds(), ids);
    Instant.parse(m.get("createdAt").asText());
    assertEquals(format, r.format());
  }

  private static List<String> iterable(java.util.Iterator<String> it) {
    List<String> out = new ArrayList<>();
    it.forEachRemaining(out::add);
    return out;
  }
}
