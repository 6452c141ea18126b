package io.otl.node.otlp;

import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** What the OpenTelemetry Java exporter tells its user about a refused export: its log. */
final class ExporterLog {
  private ExporterLog() {}

  /**
   * The exporter's log lines while it exports one chat span to {@code endpoint} ({@code …/v1/traces}),
   * without a token and without retries, joined by new lines.
   */
  static String ofOneChatSpan(String endpoint) {
    return whileExporting(() -> {
      SdkTracerProvider provider = SdkTracerProvider.builder()
          .addSpanProcessor(SimpleSpanProcessor.create(OtlpHttpSpanExporter.builder().setRetryPolicy(null)
              .setEndpoint(endpoint).build()))
          .build();
      provider.get("agent").spanBuilder("chat m").setAttribute("gen_ai.operation.name", "chat").startSpan().end();
      provider.close(); // waits for the export
    });
  }

  /** The exporter's log lines while {@code export} runs (it must wait for its export), joined by new lines. */
  static String whileExporting(Runnable export) {
    List<String> logged = new CopyOnWriteArrayList<>();
    // the exporter's class moves between packages across SDK versions: its parent logger takes all
    Logger exporterLog = Logger.getLogger("io.opentelemetry.exporter");
    Handler capture = new Handler() {
      @Override
      public void publish(LogRecord record) {
        logged.add(record.getMessage());
      }

      @Override
      public void flush() {}

      @Override
      public void close() {}
    };
    exporterLog.addHandler(capture);
    try {
      export.run();
    } finally {
      exporterLog.removeHandler(capture);
    }
    return String.join("\n", logged);
  }
}
