package io.otl.node.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.opentelemetry.exporter.otlp.http.logs.OtlpHttpLogRecordExporter;
import io.opentelemetry.exporter.otlp.http.metrics.OtlpHttpMetricExporter;
import io.opentelemetry.sdk.logs.SdkLoggerProvider;
import io.opentelemetry.sdk.logs.export.SimpleLogRecordProcessor;
import io.opentelemetry.sdk.metrics.SdkMeterProvider;
import io.opentelemetry.sdk.metrics.export.PeriodicMetricReader;
import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * An SDK given the node as its base endpoint exports metrics and logs to {@code /v1/metrics} and
 * {@code /v1/logs} beside its traces. The node reads traces only, so those are 404s; they came as the
 * API's JSON, which the Java exporter dumped raw into its log ({@code Response body: {"error":…}})
 * without saying why. Now the 404 is an OTLP Status whose message names the one signal read and the
 * settings that stop the other exports, on both listeners.
 */
class OtlpOtherSignalsTest {
  private static final String TOKEN = "otlp-signals-token";
  private static TrainingNode node;

  @BeforeAll
  static void start() throws Exception {
    node = TrainingNode.start(ConfigFactory.parseMap(Map.of("agentscope.training.auth.token", TOKEN,
            "agentscope.training.otlp.port", 0))
        .withFallback(TestDatabases.node(TestDatabases.h2(TestDatabases.outputDir("otlp-other-signals")), true)));
  }

  @AfterAll
  static void stop() {
    if (node != null) node.close();
  }

  @Test
  void theJavaExportersOfLogsAndMetricsLogWhyTheNodeRefusesThem() {
    for (int port : new int[] {node.httpPort(), node.otlpPort()}) {
      String base = "http://127.0.0.1:" + port;
      String logs = ExporterLog.whileExporting(() -> {
        SdkLoggerProvider provider = SdkLoggerProvider.builder()
            .addLogRecordProcessor(SimpleLogRecordProcessor.create(OtlpHttpLogRecordExporter.builder()
                .setEndpoint(base + "/v1/logs").addHeader("Authorization", "Bearer " + TOKEN)
                .setRetryPolicy(null).build()))
            .build();
        provider.get("agent").logRecordBuilder().setBody("gen_ai.user.message").emit();
        provider.close(); // waits for the export
      });
      assertRefusedWithReason(logs);

      String metrics = ExporterLog.whileExporting(() -> {
        SdkMeterProvider provider = SdkMeterProvider.builder()
            .registerMetricReader(PeriodicMetricReader.create(OtlpHttpMetricExporter.builder()
                .setEndpoint(base + "/v1/metrics").addHeader("Authorization", "Bearer " + TOKEN)
                .setRetryPolicy(null).build()))
            .build();
        provider.get("agent").counterBuilder("calls").build().add(1);
        provider.close(); // exports what it holds, then waits
      });
      assertRefusedWithReason(metrics);
    }
  }

  @Test
  void aJsonExportOfLogsGetsTheStatusInJson() throws Exception {
    HttpResponse<byte[]> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + node.httpPort() + "/v1/logs"))
        .header("Content-Type", "application/json").header("Authorization", "Bearer " + TOKEN)
        .POST(HttpRequest.BodyPublishers.ofString("{\"resourceLogs\":[]}")).build(),
        HttpResponse.BodyHandlers.ofByteArray());
    assertEquals(404, r.statusCode());
    var status = io.otl.http.Json.MAPPER.readTree(r.body());
    assertEquals(5, status.path("code").asInt(), status.toString()); // NOT_FOUND
    assertTrue(status.path("message").asText().contains("traces only"), status.toString());
    assertEquals("not_found", status.path("error").asText(), status.toString());
  }

  @Test
  void theApisOwn404sAreUnchanged() throws Exception {
    HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
            URI.create("http://127.0.0.1:" + node.httpPort() + "/v1/no-such-thing"))
        .header("Content-Type", "application/json").header("Authorization", "Bearer " + TOKEN)
        .POST(HttpRequest.BodyPublishers.ofString("{}")).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(404, r.statusCode());
    assertFalse(r.body().contains("traces only"), r.body());
    assertFalse(io.otl.http.Json.MAPPER.readTree(r.body()).has("code"), r.body());
  }

  private static void assertRefusedWithReason(String log) {
    assertTrue(log.contains("HTTP status code 404"), log);
    assertTrue(log.contains("Error message: this node reads OTLP traces only"), log);
    assertFalse(log.contains("Response body:"), "read as a Status, not dumped raw: " + log);
  }
}
