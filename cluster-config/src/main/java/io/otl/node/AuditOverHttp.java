package io.otl.node;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.api.AuditLog;
import io.otl.core.api.AuditLog.Kind;
import java.io.PrintStream;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * {@code audit <kind> <id>} while a node holds the embedded journal: the same answer, read page by
 * page from {@code GET /v1/audit/{kind}/{id}} and the lineage routes of that node (JSON), or its
 * {@code /timeline} (text).
 */
final class AuditOverHttp {
  private static final ObjectMapper JSON = new ObjectMapper();

  private AuditOverHttp() {}

  static int run(NodeHttpClient node, Kind kind, String id, Instant asOf, String format, PrintStream out)
      throws Exception {
    String base = "/v1/audit/" + kind.wire() + "/" + URLEncoder.encode(id, StandardCharsets.UTF_8);
    if (format.equals("text")) {
      out.print(node.getText(base + "/timeline" + (asOf == null ? "" : "?asOf=" + asOf)));
      out.flush();
      return 0;
    }
    ObjectNode all = JSON.createObjectNode();
    all.put("kind", kind.wire());
    all.put("id", id);
    ArrayNode events = all.putArray("events");
    long after = 0;
    JsonNode state = null;
    while (true) {
      String q = "?limit=" + AuditLog.MAX_LIMIT + "&after=" + after + (asOf == null ? "" : "&asOf=" + asOf);
      JsonNode page = node.getJson(base + q);
      page.path("events").forEach(events::add);
      if (page.has("stateAsOf")) state = page.get("stateAsOf");
      if (page.path("next").isNull() || page.path("next").isMissingNode()) break;
      after = page.path("next").asLong();
    }
    all.putNull("next");
    if (asOf != null) all.set("stateAsOf", state);
    if (kind != Kind.COORDINATOR) {
      all.set("lineage", node.getJson("/v1/audit/lineage/" + kind.wire() + "/" + URLEncoder.encode(id, StandardCharsets.UTF_8)));
    }
    out.println(JSON.writerWithDefaultPrettyPrinter().writeValueAsString(all));
    out.flush();
    return 0;
  }
}
