package io.otl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link RequestGuard} sheds every request over {@code http.max-in-flight} with a 429 (design §7.1,
 * "429 when overloaded"), on every path but {@code /health/*} and {@code /metrics}; so each other
 * operation of {@code /v1/openapi.json} lists the 429 a generated client must retry. The timeline,
 * lineage, export, OTLP, gateway model list, console and the document itself did not (trial t94 saw
 * all of them answer 429 on a node with {@code http.max-in-flight = 1}).
 */
class OpenApiSheddingListedTest {

  @Test
  void everyShedOperationListsItsTooManyRequests() throws Exception {
    JsonNode doc = Json.MAPPER.readTree(ApiRoutes.OPENAPI);
    List<String> missing = new ArrayList<>();
    doc.get("paths").fields().forEachRemaining(path -> {
      boolean exempt = path.getKey().startsWith("/health") || path.getKey().equals("/metrics");
      path.getValue().fields().forEachRemaining(op -> {
        if (!exempt && !op.getValue().path("responses").has("429")) missing.add(op.getKey() + " " + path.getKey());
      });
    });
    assertEquals(List.of(), missing, "operations the guard sheds with 429 that do not list it");
  }
}
