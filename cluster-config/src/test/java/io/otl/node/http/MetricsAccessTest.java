package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Issue #14.5: /metrics follows read protection and can have its own token. */
class MetricsAccessTest {
  private static TrainingNode node(Map<String, Object> auth) throws Exception {
    return TrainingNode.start(ConfigFactory.parseMap(auth)
        .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-metrics-")), true)));
  }

  @Test
  void protectedReadsProtectMetricsWithTheMainToken() throws Exception {
    try (TrainingNode node = node(Map.of("agentscope.training.auth.token", "main-token",
        "agentscope.training.auth.protect-reads", true))) {
      Http.Response anonymous = new Http(node.httpPort()).get("/metrics");
      assertEquals(401, anonymous.status());
      assertEquals("unauthorized", anonymous.json().get("error").asText());
      assertFalse(anonymous.body().contains("otl_"), "a refused scrape showed metrics");
      assertEquals(401, new Http(node.httpPort()).withToken("wrong").get("/metrics").status());
      assertTrue(new Http(node.httpPort()).withToken("main-token").get("/metrics").body().contains("otl_http_in_flight"));
      assertEquals(200, new Http(node.httpPort()).get("/health/ready").status(), "probes stay open");
    }
  }

  @Test
  void aMetricsTokenIsRequiredWhenSetAndTheMainTokenStillWorks() throws Exception {
    Map<String, Object> conf = new HashMap<>();
    conf.put("agentscope.training.auth.token", "main-token");
    conf.put("agentscope.training.auth.metrics-token", "scrape-token");
    try (TrainingNode node = node(conf)) {
      assertEquals(401, new Http(node.httpPort()).get("/metrics").status());
      assertEquals(200, new Http(node.httpPort()).withToken("scrape-token").get("/metrics").status());
      assertEquals(200, new Http(node.httpPort()).withToken("main-token").get("/metrics").status());
      assertEquals(404, new Http(node.httpPort()).get("/v1/sessions/s1").status(), "other reads stay open");
      assertEquals(401, new Http(node.httpPort()).withToken("scrape-token")
          .post("/v1/sessions/s1/events", "{}").status(), "the scrape token grants no writes");
    }
  }

  @Test
  void withoutProtectionMetricsStayOpen() throws Exception {
    try (TrainingNode node = node(Map.of("agentscope.training.auth.token", "main-token"))) {
      assertEquals(200, new Http(node.httpPort()).get("/metrics").status());
    }
  }
}
