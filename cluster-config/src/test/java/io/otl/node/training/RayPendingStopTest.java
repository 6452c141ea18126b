package io.otl.node.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A job whose entrypoint asks for a GPU on a Ray cluster without one (trial t76, a real Ray 2.58 head,
 * {@code trinity.entrypoint-num-gpus = 1}). Real Ray answered, where the simulator starts every job:
 *
 * <ul>
 *   <li>{@code GET /api/jobs/<id>}: {@code PENDING}, message "Job has not started yet. It may be waiting
 *       for resources (CPUs, GPUs, memory, custom resources) to become available.", for
 *       RAY_JOB_START_TIMEOUT_SECONDS (900 s by default) before it fails the job; the node's job said
 *       only "accepted by the backend" all that time;
 *   <li>{@code POST /api/jobs/<id>/stop}: 200 {@code {"stopped": true}} (a stop queued on the job's
 *       supervisor actor, which cannot be scheduled), while the job stayed PENDING; the node recorded
 *       CANCELLED "stopped on the backend" at once and released the agent, although the job was still
 *       queued on Ray and would start once a GPU freed up.
 * </ul>
 *
 * This stand-in Ray answers exactly that, on loopback. The job now shows Ray's reason in its history, and
 * a cancel ends it CANCELLED only once Ray reports it STOPPED.
 */
class RayPendingStopTest {

  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final String WAITING = "Job has not started yet. It may be waiting for resources "
      + "(CPUs, GPUs, memory, custom resources) to become available.";

  /** One job's state as Ray 2.58's job head reports it. */
  static final class StandInRay implements AutoCloseable {
    final HttpServer server;
    volatile String status = "PENDING";
    volatile String message = WAITING;
    volatile JsonNode submitted;
    final AtomicInteger stops = new AtomicInteger();
    final AtomicInteger pollsAfterStop = new AtomicInteger();

    StandInRay() throws IOException {
      server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      server.createContext("/api/jobs/", this::handle);
      server.start();
    }

    String url() {
      return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    private void handle(HttpExchange ex) throws IOException {
      String path = ex.getRequestURI().getPath();
      String method = ex.getRequestMethod();
      if (method.equals("POST") && path.equals("/api/jobs/")) {
        submitted = MAPPER.readTree(ex.getRequestBody());
        String id = submitted.get("submission_id").asText();
        reply(ex, 200, Map.of("job_id", id, "submission_id", id));
      } else if (submitted != null && method.equals("POST") && path.equals(
          "/api/jobs/" + submitted.get("submission_id").asText() + "/stop")) {
        stops.incrementAndGet();
        reply(ex, 200, Map.of("stopped", true)); // and the job stays PENDING, as on real Ray
      } else if (submitted != null && method.equals("GET") && path.equals(
          "/api/jobs/" + submitted.get("submission_id").asText())) {
        if (stops.get() > 0) pollsAfterStop.incrementAndGet();
        Map<String, Object> job = new LinkedHashMap<>();
        job.put("type", "SUBMISSION");
        job.put("job_id", null);
        job.put("submission_id", submitted.get("submission_id").asText());
        job.put("status", status);
        job.put("entrypoint", submitted.get("entrypoint").asText());
        job.put("message", message);
        job.put("error_type", null);
        job.put("metadata", submitted.get("metadata"));
        reply(ex, 200, job);
      } else {
        byte[] body = ("Job " + path + " does not exist").getBytes(StandardCharsets.UTF_8);
        ex.sendResponseHeaders(404, body.length);
        ex.getResponseBody().write(body);
        ex.close();
      }
    }

    private static void reply(HttpExchange ex, int status, Object body) throws IOException {
      byte[] bytes = MAPPER.writeValueAsBytes(body);
      ex.getResponseHeaders().add("Content-Type", "application/json");
      ex.sendResponseHeaders(status, bytes.length);
      ex.getResponseBody().write(bytes);
      ex.close();
    }

    @Override
    public void close() {
      server.stop(0);
    }
  }

  @Test
  void aJobPendingForAGpuShowsRaysReasonAndACancelWaitsForRayToStopIt() throws Exception {
    Path work = TestDatabases.outputDir("ray-pending-stop");
    try (StandInRay ray = new StandInRay();
        TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
                "agentscope.training.training-runner.trinity-endpoint", ray.url(),
                "agentscope.training.training-runner.trinity.entrypoint-num-gpus", 1,
                "agentscope.training.training-runner.trigger.type", "manual",
                "agentscope.training.training-runner.poll-interval", "100ms",
                "agentscope.training.training-runner.dataset-dir", work.resolve("datasets").toString(),
                "agentscope.training.training-runner.checkpoint-root-dir", work.resolve("checkpoints").toString(),
                "agentscope.training.simulator.enabled", false,
                "agentscope.training.read-side.rescan-interval", "1s"))
            .withFallback(TestDatabases.node(TestDatabases.h2(work), true)))) {
      Http http = new Http(node.httpPort());
      for (int i = 0; i < 3; i++) {
        int n = i;
        Await.until("session " + n + " stored", () -> storedOrRetry(http, n), ok -> ok);
      }
      Await.until("the pool to hold 3", () -> okJson(http.get("/v1/training/gpu-wait")),
          t -> t.get("poolSize").asInt() == 3);
      Http.Response trigger = http.post("/v1/training/gpu-wait/trigger", null);
      assertEquals(202, trigger.status(), trigger.body());
      String jobId = trigger.json().get("jobId").asText();

      JsonNode pending = Await.until("Ray's reason for the wait in the job's history",
          () -> okJson(http.get("/v1/jobs/" + jobId)),
          j -> j.get("history").toString().contains("may be waiting for resources"));
      assertEquals(1, ray.submitted.get("entrypoint_num_gpus").asInt(), ray.submitted.toString());
      assertEquals("SUBMITTED", pending.get("status").asText(), pending.toString());
      assertTrue(pending.get("history").toString().contains("pending on the backend: " + WAITING),
          pending.get("history").toString());

      Http.Response cancel = http.post("/v1/jobs/" + jobId + "/cancel", null);
      assertEquals(202, cancel.status(), cancel.body());
      // Ray took the stop and keeps reporting PENDING: the job is not over, and the agent stays busy.
      Await.until("the node to poll Ray after its stop", ray.pollsAfterStop::get, n -> n >= 3);
      JsonNode waiting = okJson(http.get("/v1/jobs/" + jobId));
      assertEquals("SUBMITTED", waiting.get("status").asText(), waiting.toString());
      assertTrue(waiting.get("history").toString().contains("cancel requested"), waiting.toString());
      assertFalse(waiting.get("history").toString().contains("CANCELLED"), waiting.toString());
      Http.Response again = http.post("/v1/training/gpu-wait/trigger", null);
      assertEquals(409, again.status(), again.body());
      // The history names Ray's reason once, not on every poll.
      assertEquals(1, waiting.get("history").toString().split("may be waiting for resources", -1).length - 1,
          waiting.get("history").toString());

      ray.status = "STOPPED";
      ray.message = "Job was intentionally stopped.";
      JsonNode cancelled = Await.until("the job CANCELLED once Ray reports it stopped",
          () -> okJson(http.get("/v1/jobs/" + jobId)), j -> j.get("status").asText().equals("CANCELLED"));
      assertTrue(cancelled.get("history").toString().contains("stopped on the backend"), cancelled.toString());
    }
  }

  private static boolean storedOrRetry(Http http, int i) {
    Http.Response r = http.post("/v1/sessions/gpu-wait-s" + i + "/events", """
        {"agentId":"gpu-wait","events":[
          {"type":"message","role":"user","content":"question %d"},
          {"type":"message","role":"assistant","content":"answer %d","latencyMs":500},
          {"type":"feedback","kind":"RATING","value":5,"feedbackId":"fb-%d"},
          {"type":"result","status":"SUCCESS"}]}""".formatted(i, i, i));
    assertTrue(r.status() == 202 || r.status() == 503, r.body());
    return r.status() == 202;
  }

  private static JsonNode okJson(Http.Response r) {
    return r.status() == 200 ? r.json() : null;
  }
}
