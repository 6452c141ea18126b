package io.otl.node;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.coordinator.DatasetManifest;
import io.otl.persistence.export.ExportFilters;
import io.otl.persistence.export.FileProblems;
import io.otl.persistence.export.ExportFormat;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code export} while a node holds the embedded journal: {@code POST /v1/exports/{agentId}} on
 * that node, the answer (manifest line, then the dataset) written to the same two files as an
 * offline export; the file's SHA-256 is checked against the manifest before it is moved into place.
 */
final class ExportOverHttp {
  private static final ObjectMapper JSON = new ObjectMapper();

  private ExportOverHttp() {}

  /** {@code filters}: null to use the node's, else sent with the request (the command's {@code --config}). */
  static int run(NodeHttpClient node, String agent, ExportFormat format, Instant from, Instant to, boolean allowPii,
      ExportFilters filters, Path dir, String name, PrintStream out, PrintStream err) {
    String q = "?format=" + format.wireName() + (from == null ? "" : "&since=" + from) + (to == null ? "" : "&until=" + to)
        + (allowPii ? "&allowPii=true" : "")
        + (filters == null ? "" : "&sftMinReward=" + filters.sftMinReward() + "&minQuality=" + filters.minQuality()
            + "&dpoMinMargin=" + filters.dpoMinMargin());
    Path file = dir.resolve(name + ".jsonl");
    Path manifest = dir.resolve(name + ".manifest.json");
    Path tmp = dir.resolve(name + ".jsonl.tmp");
    // First, whatever follows: an export that selects nothing or fails must say which node answered too (a node
    // on another database than the one the user meant explains an empty selection; trial t155).
    out.println("via node: " + node.node().baseUrl() + " (pid " + node.node().pid() + ")");
    try {
      var response = node.postStream("/v1/exports/" + URLEncoder.encode(agent, StandardCharsets.UTF_8) + q,
          Duration.ofHours(6));
      Files.createDirectories(dir);
      JsonNode m;
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      try (InputStream in = new BufferedInputStream(response.body());
          OutputStream o = new DigestOutputStream(Files.newOutputStream(tmp), sha)) {
        ByteArrayOutputStream first = new ByteArrayOutputStream();
        for (int c = in.read(); c != '\n'; c = in.read()) {
          if (c < 0) throw new IOException("the node's answer ended before the manifest");
          first.write(c);
        }
        m = JSON.readTree(first.toByteArray());
        in.transferTo(o);
      }
      String got = HexFormat.of().formatHex(sha.digest());
      if (!got.equals(m.path("sha256").asText())) {
        Files.deleteIfExists(tmp);
        err.println("error: the export from the node arrived incomplete (SHA-256 " + got + " instead of "
            + m.path("sha256").asText() + "); nothing was written");
        return 1;
      }
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      Path manifestTmp = dir.resolve(name + ".manifest.json.tmp");
      try {
        Files.writeString(manifestTmp, JSON.writerWithDefaultPrettyPrinter().writeValueAsString(m) + "\n");
        Files.move(manifestTmp, manifest, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } catch (IOException e) {
        // A file without its manifest is no export: it stayed after "failed" (trial t73), as offline.
        FileProblems.deleteQuietly(manifestTmp);
        FileProblems.deleteQuietly(file);
        // Nor may an older manifest stay: it described the file just replaced (review t75).
        if (Files.isRegularFile(manifest)) FileProblems.deleteQuietly(manifest);
        err.println("error: the export through the node failed: cannot write " + manifest + ": "
            + FileProblems.describe(e) + "; nothing was written");
        return 1;
      }
      out.println("manifest: " + manifest);
      out.println("file:     " + file);
      out.println("count:    " + m.path("count").asInt());
      out.println("sha256:   " + got);
      out.println("sessions: " + selection(m));
      if (m.path("skipped").size() > 0) out.println("skipped:  " + m.path("skipped"));
      if (m.path("piiFindings").size() > 0) out.println("PII found (kept: --allow-pii): " + m.path("piiFindings"));
      ExportCommand.printDesensitized(out, m.path("desensitizedAsWritten").asInt(0));
      return 0;
    } catch (NodeHttpClient.NodeError e) {
      FileProblems.deleteQuietly(tmp);
      if (e.error.equals("pii_found") || e.error.equals("nothing_selected")) {
        // The export of this name has no rows to give: an older file and manifest of that name go, as
        // the export reading the journal itself removes them (DatasetExport, JsonlFile.commit). Left
        // here, "no file written" sat beside last run's file, which a script then read as this one's.
        FileProblems.deleteQuietly(file);
        FileProblems.deleteQuietly(manifest);
      }
      if (e.error.equals("pii_found")) {
        err.println("error: " + e.getMessage().replace("allowPii=true", "--allow-pii"));
      } else if (e.error.equals("nothing_selected")) {
        err.println("error: " + e.getMessage());
        return ExportCommand.EMPTY;
      } else {
        err.println("error: the node answered " + NodeHttpClient.answered(e.status, e.getMessage()));
      }
      return e.status == 400 ? 2 : 1;
    } catch (java.nio.file.FileSystemException e) { // writing here; the node's answer failing is below
      FileProblems.deleteQuietly(tmp);
      err.println("error: the export through the node failed: cannot write " + file + ": " + FileProblems.describe(e));
      return 1;
    } catch (Exception e) {
      FileProblems.deleteQuietly(tmp);
      err.println("error: the export through the node failed: " + e.getMessage());
      return 1;
    }
  }

  /** The counts by reason, worded as the export that reads the journal itself prints them. */
  private static String selection(JsonNode manifest) {
    Map<String, Integer> exclusions = new LinkedHashMap<>();
    manifest.path("exclusions").fields().forEachRemaining(e -> exclusions.put(e.getKey(), e.getValue().asInt()));
    return DatasetManifest.selectionSummary(manifest.path("seen").asInt(), exclusions);
  }
}
