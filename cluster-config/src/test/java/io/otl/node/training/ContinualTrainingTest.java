package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.node.testing.Await;
import com.fasterxml.jackson.databind.JsonNode;
import com.typesafe.config.Config;
import io.otl.node.TrainingNode;
import io.otl.node.simulator.TrinitySimulator;
import io.otl.node.testing.Http;
import io.otl.persistence.export.ContinualSettings;
import io.otl.persistence.export.DatasetExport;
import io.otl.persistence.export.ExportFormat;
import io.otl.persistence.export.HeldOut;
import io.otl.persistence.export.JobDatasetExport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Continual training end to end (issue #16 item 2) over real HTTP, the PostgreSQL journal and the
 * Trinity simulator: job 1 starts from the base model (no stable yet, and says so), its model v1 is
 * promoted to STABLE, and job 2 starts from v1's checkpoint (the rendered Trinity config's {@code
 * model_path}), replays a sample of job 1's trajectories, drops an exact and a near duplicate and
 * writes its held-out sessions to the eval file only. The lineage survives a restart, and exporting
 * job 2 again gives the same bytes and the same replay sample.
 */
class ContinualTrainingTest {
  private static final String AGENT = "cont-agent";
  private static final double EVAL = 0.2;
  private static SimulatedTrinity trinity;
  private static TrinitySimulator simulator;
  private static Path work;

  @BeforeAll
  static void startSimulator() throws Exception {
    trinity = SimulatedTrinity.start("otl-continual-");
    simulator = trinity.simulator;
    work = trinity.work;
  }

  @AfterAll
  static void stopSimulator() {
    if (trinity != null) trinity.close();
  }

  private static Config node() {
    return trinity.node(12, Map.of("agentscope.training.training-runner.eval-fraction", EVAL,
        "agentscope.training.training-runner.replay-fraction", 0.2));
  }

  private static void session(Http http, String id, String question, String answer) {
    Http.Response r = http.post("/v1/sessions/" + id + "/events", """
        {"agentId":"%s","events":[
          {"type":"start","modelVersion":"base"},
          {"type":"message","role":"user","content":"%s"},
          {"type":"message","role":"assistant","content":"%s","latencyMs":500},
          {"type":"feedback","kind":"RATING","value":5,"feedbackId":"fb-%s"},
          {"type":"result","status":"SUCCESS"}]}""".formatted(AGENT, question, answer, id));
    assertEquals(202, r.status(), r.body());
  }

  /** {@code n} ids with prefix whose held-out status is {@code heldOut}. */
  private static List<String> ids(String prefix, int n, boolean heldOut) {
    return io.otl.node.testing.HeldOutIds.of(prefix, n, heldOut, EVAL);
  }

  private static JsonNode job(Http http, String jobId) throws InterruptedException {
    return Await.until(jobId + " succeeded", () -> {
      Http.Response r = http.get("/v1/jobs/" + jobId);
      return r.status() == 200 ? r.json() : null;
    }, j -> j.get("status").asText().equals("SUCCEEDED"));
  }

  private static JsonNode audit(Http http, String jobId) {
    Http.Response r = http.get("/v1/audit/lineage/job/" + jobId);
    assertEquals(200, r.status(), r.body());
    return r.json();
  }

  private static JsonNode sessionLineage(Http http, String sessionId) {
    Http.Response r = http.get("/v1/audit/lineage/session/" + sessionId);
    assertEquals(200, r.status(), r.body());
    return r.json().get("jobs");
  }

  private static List<String> jobIdsOf(JsonNode jobs) {
    List<String> out = new ArrayList<>();
    jobs.forEach(j -> out.add(j.get("jobId").asText()));
    return out;
  }

  private static List<String> ordered(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  private static Set<String> texts(JsonNode array) {
    Set<String> out = new HashSet<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  @Test
  void secondJobStartsFromTheStableCheckpointWithReplayDedupAndAHeldOutSet() throws Exception {
    Config config = node();
    String job2Id = "job-2-" + AGENT;
    JsonNode job2Dataset;
    try (TrainingNode node = TrainingNode.start(config)) {
      Http http = new Http(node.httpPort());
      List<String> train1 = ids("a-", 10, false);
      List<String> eval1 = ids("a-", 2, true);
      for (int i = 0; i < 10; i++) session(http, train1.get(i), "question " + i, "answer " + i);
      for (int i = 0; i < 2; i++) session(http, eval1.get(i), "held question " + i, "held answer " + i);

      JsonNode job1 = job(http, "job-1-" + AGENT);
      JsonNode d1 = job1.get("dataset");
      JsonNode l1 = d1.get("lineage");
      assertEquals("base", l1.get("startFrom").asText(), l1.toString());
      assertTrue(l1.get("startNote").asText().contains("falling back to the base model"), l1.toString());
      assertEquals(10, d1.get("count").asInt(), d1.toString());
      assertEquals(Set.copyOf(train1), texts(audit(http, "job-1-" + AGENT).get("dataset").get("sessionIds")));
      assertEquals(Set.copyOf(eval1), texts(l1.get("evalSessionIds")));
      assertEquals(2, d1.get("exclusions").get("held-out-for-eval").asInt());
      assertEquals(2, Files.readAllLines(Path.of(l1.get("evalPath").asText())).size());
      // One folder per job holding only its rows, so Trinity's load_dataset(folder, split=…) reads them.
      Path job1File = Path.of(d1.get("path").asText());
      assertEquals(Path.of("job-1-" + AGENT, "train.jsonl"), job1File.subpath(job1File.getNameCount() - 2,
          job1File.getNameCount()), d1.toString());
      assertEquals(job1File.resolveSibling("test.jsonl"), Path.of(l1.get("evalPath").asText()));

      // v1 becomes STABLE (directly, or through canary when the node registered the base as v0).
      JsonNode v1 = Await.until("v1 stable", () -> {
        // 404 until the coordinator has handed v1 over (just after the job succeeded): not yet.
        Http.Response r = http.get("/v1/models/" + AGENT);
        if (r.status() == 404) return null;
        assertEquals(200, r.status(), r.body());
        JsonNode models = r.json();
        for (JsonNode v : models.get("versions")) {
          if (v.get("version").asText().equals("v1") && !v.get("state").asText().equals("STABLE")) {
            http.post("/v1/models/" + AGENT + "/versions/v1/promote", null);
          }
        }
        return models;
      }, m -> "v1".equals(m.get("stable").asText()));
      String checkpoint = null;
      for (JsonNode v : v1.get("versions")) if (v.get("version").asText().equals("v1")) checkpoint = v.get("artifact").asText();

      List<String> fresh2 = ids("b-", 10, false);
      List<String> eval2 = ids("b-", 2, true);
      for (int i = 0; i < 8; i++) session(http, fresh2.get(i), "second question " + i, "second answer " + i);
      session(http, fresh2.get(8), "second question 0", "second answer 0"); // exact duplicate
      session(http, fresh2.get(9), "Second  QUESTION 0?", "Second answer 0!"); // near duplicate
      for (int i = 0; i < 2; i++) session(http, eval2.get(i), "held again " + i, "held answer " + i);

      JsonNode job2 = job(http, job2Id);
      job2Dataset = job2.get("dataset");
      JsonNode l2 = job2Dataset.get("lineage");
      assertEquals("stable", l2.get("startFrom").asText(), l2.toString());
      assertEquals("v1", l2.get("startVersion").asText());
      assertEquals(checkpoint, l2.get("startCheckpoint").asText());
      assertEquals(3, l2.get("replayCount").asInt(), "round(10 · 0.2 / 0.8) older trajectories: " + l2);
      Set<String> replayed = texts(l2.get("replaySessionIds"));
      assertTrue(Set.copyOf(train1).containsAll(replayed), "replay comes from job 1's data: " + replayed);
      JsonNode ex = job2Dataset.get("exclusions");
      assertEquals(1, ex.get("duplicate-exact").asInt(), ex.toString());
      assertEquals(1, ex.get("duplicate-near").asInt(), ex.toString());
      assertEquals(2, ex.get("held-out-for-eval").asInt(), ex.toString());
      assertEquals(8 + 3, job2Dataset.get("count").asInt(), job2Dataset.toString());
      JsonNode audit2 = audit(http, job2Id);
      assertEquals(job2Dataset.get("lineage"), audit2.get("dataset").get("lineage"), "lineage shows it too");
      Set<String> trained = texts(audit2.get("dataset").get("sessionIds"));
      assertTrue(trained.containsAll(replayed));
      for (String held : eval2) assertTrue(!trained.contains(held), held + " must never be trained on");
      assertEquals(Set.copyOf(eval2), texts(l2.get("evalSessionIds")));
      String trainFile = Files.readString(Path.of(job2Dataset.get("path").asText()));
      assertTrue(!trainFile.contains("held again"), "held-out text in the training file");

      // From the session's side (an auditor asking which models a trajectory trained): a replayed one
      // names job 2 as well as job 1, although job 2 never took it from the pool; a held-out one says why
      // it is not in the dataset. Read from the request alone, the lineage named job 1 only.
      String replayedId = replayed.iterator().next();
      JsonNode jobsOfReplayed = sessionLineage(http, replayedId);
      assertEquals(List.of("job-1-" + AGENT, job2Id), jobIdsOf(jobsOfReplayed), jobsOfReplayed.toString());
      assertTrue(jobsOfReplayed.get(1).get("inDataset").asBoolean() && jobsOfReplayed.get(1).get("replayed").asBoolean(),
          jobsOfReplayed.toString());
      assertTrue(!jobsOfReplayed.get(0).get("replayed").asBoolean(), "job 1 took it from the pool: " + jobsOfReplayed);
      JsonNode jobsOfHeldOut = sessionLineage(http, eval2.get(0));
      assertEquals(List.of(job2Id), jobIdsOf(jobsOfHeldOut), jobsOfHeldOut.toString());
      assertTrue(!jobsOfHeldOut.get(0).get("inDataset").asBoolean() && jobsOfHeldOut.get(0).get("heldOutForEval").asBoolean(),
          jobsOfHeldOut.toString());
      // A session the job took but its export dropped says why, by the reason its exclusions count: the
      // lineage said only "not in its dataset" (held-out sessions alone had a reason).
      String dropped = trained.contains(fresh2.get(8)) ? fresh2.get(0) : fresh2.get(8);
      assertTrue(!trained.contains(dropped), "one of the two exact duplicates is dropped: " + trained);
      JsonNode jobsOfDropped = sessionLineage(http, dropped);
      assertEquals(List.of(job2Id), jobIdsOf(jobsOfDropped), jobsOfDropped.toString());
      assertTrue(!jobsOfDropped.get(0).get("inDataset").asBoolean() && !jobsOfDropped.get(0).get("heldOutForEval").asBoolean(),
          jobsOfDropped.toString());
      assertEquals("duplicate-exact", jobsOfDropped.get(0).get("excludedFor").asText(), jobsOfDropped.toString());
      assertEquals("held-out-for-eval", jobsOfHeldOut.get(0).get("excludedFor").asText(), jobsOfHeldOut.toString());
      assertEquals(List.of(dropped), ordered(audit2.get("dataset").get("excludedSessionIds").get("duplicate-exact")),
          "the job's lineage names it under its reason: " + audit2.get("dataset"));
      String droppedTimeline = http.get("/v1/audit/session/" + dropped + "/timeline").body();
      assertTrue(droppedTimeline.contains("taken by: job " + job2Id + " (SUCCEEDED, not in its dataset: duplicate-exact)"),
          droppedTimeline);
      String timeline = http.get("/v1/audit/session/" + replayedId + "/timeline").body();
      assertTrue(timeline.contains("trained in: job " + job2Id + " (SUCCEEDED, in its dataset, replayed from an earlier job's data)"),
          timeline);
      String heldOutTimeline = http.get("/v1/audit/session/" + eval2.get(0) + "/timeline").body();
      assertTrue(heldOutTimeline.contains("taken by: job " + job2Id
          + " (SUCCEEDED, not in its dataset: held out as its evaluation set)"), heldOutTimeline);

      // Beside the job's data folder, not in it: load_dataset(folder) would read it as rows.
      Path yaml = Path.of(job2Dataset.get("path").asText()).getParent().resolveSibling(job2Id + ".trinity.yaml");
      String rendered = Files.readString(yaml);
      String expectedPath = Path.of(java.net.URI.create(checkpoint)).toString();
      assertTrue(rendered.contains("model_path: \"" + expectedPath + "\"") || rendered.contains("model_path: " + expectedPath),
          rendered);

      // The same job exported again: same bytes, same sample (seeded by the job id).
      Path again = Files.createTempDirectory(work, "again-");
      JobDatasetExport.Result r = new JobDatasetExport(new DatasetExport(node.system()),
              ContinualSettings.fromConfig(config.getConfig("agentscope.training.training-runner")))
          .export(AGENT, job2Id, ordered(audit2.get("requestedSessionIds")), ExportFormat.SFT, again)
          .toCompletableFuture().get(60, TimeUnit.SECONDS);
      assertEquals(ordered(l2.get("replaySessionIds")), r.lineage().replaySessionIds());
      assertEquals(job2Dataset.get("sha256").asText(), r.train().sha256(), "same bytes");
      assertEquals(l2.get("startCheckpoint").asText(), r.lineage().startCheckpoint());
    }
    try (TrainingNode node = TrainingNode.start(config)) {
      Http http = new Http(node.httpPort());
      JsonNode recovered = http.get("/v1/jobs/" + job2Id).json();
      assertEquals(job2Dataset, recovered.get("dataset"), "lineage rebuilt from the journal");
      assertEquals("v1", audit(http, job2Id).get("dataset").get("lineage").get("startVersion").asText());
    }
  }
}
