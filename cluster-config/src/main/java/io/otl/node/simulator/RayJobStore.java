package io.otl.node.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The simulated Ray cluster's jobs on disk ({@code <work-dir>/ray-jobs/<submission id>.json}), so
 * that they outlive the simulator's process as a real Ray cluster outlives the node that submitted
 * to it. Embedded in the node, the simulator dies with it on a kill -9; the restarted node polls the
 * job it had submitted (design 3.2: picked up again, never submitted twice) and must find it, not
 * a 404 that fails the job. One small file per job, written whole on submission and at its end.
 */
final class RayJobStore {
  private static final Logger log = LoggerFactory.getLogger(RayJobStore.class);

  /** A job as stored: the submission request as sent, and its state when last written. */
  record Stored(JsonNode request, long submittedAt, String status, String message, String errorType, Long endTime,
      Integer exitCode) {}

  private final ObjectMapper mapper;
  private final Path dir;

  RayJobStore(ObjectMapper mapper, Path workDir) {
    this.mapper = mapper;
    this.dir = workDir.resolve("ray-jobs");
  }

  void save(String id, Stored job) {
    try {
      Files.createDirectories(dir);
      ObjectNode n = mapper.createObjectNode();
      n.set("request", job.request());
      n.put("submittedAt", job.submittedAt());
      n.put("status", job.status());
      n.put("message", job.message());
      n.put("errorType", job.errorType());
      n.put("endTime", job.endTime());
      n.put("exitCode", job.exitCode());
      Path tmp = Files.createTempFile(dir, ".job-", ".tmp");
      Files.write(tmp, mapper.writeValueAsBytes(n));
      Files.move(tmp, dir.resolve(fileName(id)), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      log.warn("[trinity-simulator] job {} not written to {} ({}); it will not survive a restart", id, dir,
          e.getMessage());
    }
  }

  void delete(String id) {
    try {
      Files.deleteIfExists(dir.resolve(fileName(id)));
    } catch (IOException e) {
      log.warn("[trinity-simulator] job {} not deleted from {} ({})", id, dir, e.getMessage());
    }
  }

  /** Every stored job; a file that cannot be read is skipped with a warning. */
  List<Stored> load() {
    List<Stored> jobs = new ArrayList<>();
    if (!Files.isDirectory(dir)) return jobs;
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : files.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList()) {
        try {
          JsonNode n = mapper.readTree(f.toFile());
          jobs.add(new Stored(n.get("request"), n.path("submittedAt").asLong(), n.path("status").asText("PENDING"),
              n.path("message").asText(null), n.path("errorType").asText(null),
              n.path("endTime").isNumber() ? n.path("endTime").asLong() : null,
              n.path("exitCode").isNumber() ? n.path("exitCode").asInt() : null));
        } catch (IOException | RuntimeException e) {
          log.warn("[trinity-simulator] skipped unreadable job file {} ({})", f, e.getMessage());
        }
      }
    } catch (IOException e) {
      log.warn("[trinity-simulator] cannot list {} ({})", dir, e.getMessage());
    }
    return jobs;
  }

  /** Submission ids are the client's: hex-escape anything but a safe file-name character. */
  private static String fileName(String id) {
    StringBuilder b = new StringBuilder();
    for (char c : id.toCharArray()) {
      if (Character.isLetterOrDigit(c) && c < 128 || c == '-' || c == '_') b.append(c);
      else b.append(String.format("%%%04x", (int) c));
    }
    return b + ".json";
  }
}
