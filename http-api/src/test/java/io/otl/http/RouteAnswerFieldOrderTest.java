package io.otl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.junit.jupiter.api.Test;

/**
 * Trial t149: {@code GET /v1/models/{agentId}/route} answered its five fields in an order that changed
 * with each start of the node (an immutable {@code Map.of}, whose iteration order is salted per JVM), so
 * an operator diffing the routes of every session before and after a restart saw every line change
 * while no route had. The fields come in the order docs/api.md lists them.
 */
class RouteAnswerFieldOrderTest {
  @Test
  void theRouteAnswersItsFieldsInTheDocumentedOrder() throws Exception {
    HttpEntity.Strict entity = (HttpEntity.Strict) ModelRoutes.routeJson("support-bot", "s-1", "v1",
        "http://127.0.0.1:8265/v1", "support-bot-v1-52c9de06").entity();
    List<String> fields = new ArrayList<>();
    new ObjectMapper().readTree(entity.getData().utf8String()).fieldNames().forEachRemaining(fields::add);
    assertEquals(List.of("agentId", "sessionId", "version", "endpoint", "servedModel"), fields);
  }
}
