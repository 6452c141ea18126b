package io.otl.node.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.node.testing.PythonVenv;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.Test;

/**
 * Ray's own Python Jobs client ({@code ray.job_submission.JobSubmissionClient}, the pinned release of
 * scripts/python-requirements.txt) against the simulator over HTTP: connect (version check), submit,
 * status, info, list, logs, the log tail ({@code tail_job_logs}, a WebSocket), stop, delete, and Ray's
 * refusals. The script checks each step; this test asserts on its report. Skipped loudly without Python (failed when OTL_REQUIRE_PYTHON=true).
 */
class RayPythonClientTest {

  @Test
  void raysJobSubmissionClientDrivesTheSimulator() throws Exception {
    PythonVenv.python();
    Path dir = TestDatabases.outputDir("ray-client");
    Files.writeString(dir.resolve("config.yaml"), """
        project: ray-client-bot
        name: run-1
        checkpoint_root_dir: ckpt
        model:
          model_path: base-model
        buffer:
          total_epochs: 1
        """);
    ActorTestKit kit = ActorTestKit.create("RayPythonClientTest");
    TrinitySimulator fast = TrinitySimulator.start(kit.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(dir).withDurations(Duration.ofMillis(200), Duration.ofMillis(500)));
    TrinitySimulator slow = TrinitySimulator.start(kit.system(), SimulatorSettings.defaults().withPort(0)
        .withWorkDir(dir).withDurations(Duration.ofHours(1), Duration.ofHours(1)));
    try {
      Path script = PythonVenv.repoRoot().resolve("cluster-config/src/test/python/ray_jobs_client_check.py");
      PythonVenv.Result r = PythonVenv.run(script,
          List.of(fast.baseUrl(), slow.baseUrl(), dir.resolve("config.yaml").toString()), dir, 300);
      assertEquals(0, r.exitCode(), r.output());
      JsonNode report = new ObjectMapper().readTree(r.lastLine());

      assertEquals(SimulatorRoutes.RAY_VERSION, report.path("server_ray_version").asText());
      assertEquals("PENDING", report.path("first_status").asText());
      assertEquals("SUCCEEDED", report.path("final_status").asText());
      assertEquals("SUBMISSION", report.path("type").asText());
      assertEquals(0, report.path("driver_exit_code").asInt());
      assertEquals("[\"ray-client-job\"]", report.path("listed").toString());
      assertTrue(report.path("logs_mention_checkpoint").asBoolean(), report.toString());
      assertTrue(report.path("tail_chunks").asInt() >= 2, "the log so far, then what the job wrote: " + report);
      assertEquals("SUCCEEDED", report.path("tail_ended_with_job").asText(), "the tail ends when the job does");
      assertTrue(report.path("tail_is_whole_log").asBoolean(), report.toString());
      assertTrue(report.path("tail_of_missing_job").asText().contains("404"), report.toString());
      assertTrue(report.path("live_delete_refusal").asText().contains("status code 400"), report.toString());
      assertTrue(report.path("stopped").asBoolean());
      assertEquals(false, report.path("stopped_again").asBoolean());
      assertEquals("STOPPED", report.path("stopped_status").asText());
      assertTrue(report.path("deleted").asBoolean());
      assertTrue(report.path("missing_after_delete").asText().contains("status code 404"), report.toString());
      assertTrue(report.path("duplicate_submission").asText().contains("already exists"), report.toString());
      // As Ray 2.58's head answers it: the job agent's 400 wrapped in the head's 500.
      assertTrue(report.path("duplicate_submission").asText().contains("status code 500"), report.toString());
      assertEquals("JOB_ENTRYPOINT_COMMAND_ERROR", report.path("failed_error_type").asText());
      assertTrue(report.path("deleted_ended").asBoolean());
      assertTrue(Files.isDirectory(dir.resolve("ckpt/ray-client-bot/run-1/global_step_10")),
          "the succeeded job wrote its checkpoint");
    } finally {
      fast.stop();
      slow.stop();
      kit.shutdownTestKit();
    }
  }
}
