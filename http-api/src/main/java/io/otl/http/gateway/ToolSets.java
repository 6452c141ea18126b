package io.otl.http.gateway;

import io.otl.core.Sha256;
import io.otl.core.session.Desensitizer;
import io.otl.core.session.GatewayMessageIds;
import io.otl.core.session.SessionInput;
import java.time.Instant;
import java.util.Map;

/**
 * How a door records the tools an agent offered its model: one start event per tool set, its id a hash
 * of the set as stored (a set sent again with every call is a duplicate; a changed set is a new start,
 * and the latest replaces the earlier, as agents resend the whole list). The gateway and the
 * OpenTelemetry door record them alike, so the export reads one shape.
 */
public final class ToolSets {
  private ToolSets() {}

  /**
   * The start's id: {@code prefix} and a hash of the desensitized text, so that the id cannot be traced
   * back to PII in a schema and matches what was stored.
   */
  public static String id(String prefix, Desensitizer d, String tools) {
    return GatewayMessageIds.opaque(prefix, Sha256.hex(d.apply(tools), 12), "");
  }

  /**
   * The start that carries {@code tools} (JSON text) in the session's metadata, or, over the text limit,
   * says they were left out: cut JSON would not parse where the export reads the schemas.
   *
   * @param cut the session's text limit; null: none
   */
  public static SessionInput.Start start(String id, String tools, TextCut cut, Instant at) {
    Map<String, String> meta = cut == null || cut.fits(tools) ? Map.of("tools", tools)
        : Map.of("toolsOmitted", tools.length() + " characters, over data-collector.max-text-length");
    return new SessionInput.Start(id, at, null, null, meta);
  }
}
