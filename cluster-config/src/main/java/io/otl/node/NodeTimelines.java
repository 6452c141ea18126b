package io.otl.node;

import io.otl.core.api.AuditLog.Kind;
import io.otl.http.AuditTimelineRoutes;
import io.otl.persistence.audit.AuditReader;
import io.otl.persistence.audit.Timeline;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/** The node's side of {@code GET /v1/audit/{kind}/{id}/timeline}: {@link Timeline} on a blocking thread. */
final class NodeTimelines implements AuditTimelineRoutes.Timelines {
  private final AuditReader reader;
  private final Executor blocking;

  NodeTimelines(AuditReader reader, Executor blocking) {
    this.reader = reader;
    this.blocking = blocking;
  }

  @Override
  public CompletionStage<String> text(Kind kind, String id, Instant asOf) {
    return CompletableFuture.supplyAsync(() -> {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);
      try {
        AuditCommand.text(reader, kind, id, asOf, out);
      } catch (RuntimeException e) {
        throw e;
      } catch (Exception e) {
        throw new IllegalStateException(e.getMessage(), e);
      }
      return bytes.toString(StandardCharsets.UTF_8);
    }, blocking);
  }
}
