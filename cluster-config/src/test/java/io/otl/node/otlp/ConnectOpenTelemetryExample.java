package io.otl.node.otlp;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.exporter.otlp.http.trace.OtlpHttpSpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.export.BatchSpanProcessor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The Java example of docs/connect-opentelemetry.md, verbatim between the markers: a test runs it
 * against a node and checks the document still shows these lines.
 */
final class ConnectOpenTelemetryExample {
  private ConnectOpenTelemetryExample() {}

  static void run(String node, String token) {
    // [example]
    SdkTracerProvider provider = SdkTracerProvider.builder()
        .addSpanProcessor(BatchSpanProcessor.builder(OtlpHttpSpanExporter.builder()
            .setEndpoint(node + "/v1/traces").addHeader("Authorization", "Bearer " + token).build()).build())
        .build();
    Span chat = provider.get("my-agent").spanBuilder("chat qwen2.5-7b-instruct")
        .setAttribute("gen_ai.operation.name", "chat")
        .setAttribute("gen_ai.conversation.id", "session-42")
        .setAttribute("gen_ai.agent.name", "my-agent")
        .setAttribute("gen_ai.input.messages", "[{\"role\":\"user\",\"content\":\"Hi, I am bob@example.com\"}]")
        .setAttribute("gen_ai.output.messages", "[{\"role\":\"assistant\",\"content\":\"Hello Bob!\"}]")
        .startSpan();
    chat.end();
    provider.close(); // flushes the batch to the node
    // [/example]
  }

  /** The example's lines, trimmed, as this file holds them. */
  static List<String> sourceLines(Path repoRoot) throws java.io.IOException {
    Path self = repoRoot.resolve("cluster-config/src/test/java/io/otl/node/otlp/ConnectOpenTelemetryExample.java");
    return between(Files.readAllLines(self), "// [example]", "// [/example]");
  }

  /** The trimmed, non-empty lines of the first fenced block of {@code language} in a markdown file. */
  static List<String> docBlock(Path markdown, String language) throws java.io.IOException {
    return between(Files.readAllLines(markdown), "```" + language, "```");
  }

  /** The lines of the first fenced block of {@code language}, as written (indentation kept). */
  static List<String> rawDocBlock(Path markdown, String language) throws java.io.IOException {
    List<String> out = new ArrayList<>();
    boolean in = false;
    for (String line : Files.readAllLines(markdown)) {
      if (!in && line.trim().equals("```" + language)) {
        in = true;
      } else if (in && line.trim().equals("```")) {
        return out;
      } else if (in) {
        out.add(line);
      }
    }
    throw new IllegalStateException("no ```" + language + " block in " + markdown);
  }

  private static List<String> between(List<String> lines, String start, String end) {
    List<String> out = new ArrayList<>();
    boolean in = false;
    for (String line : lines) {
      String t = line.trim();
      if (!in && t.equals(start)) {
        in = true;
      } else if (in && t.equals(end)) {
        return out;
      } else if (in && !t.isEmpty()) {
        out.add(t);
      }
    }
    throw new IllegalStateException("no block from " + start + " to " + end);
  }
}
