package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The start-up line says where training jobs go. AgentScope's application.yml points
 * trinity-endpoint at its own Trinity service while the node's simulator starts too, and the line
 * said only "Trinity SIMULATOR on port 8265", so an operator read that jobs ran on the simulator
 * (found by the operator trial). The endpoint is shown without its user info, which may hold a
 * password.
 */
class StartupLineTest {

  @Test
  void theStartupLineNamesTheTrainingBackendAndEndpointWithoutCredentials() throws Exception {
    ListAppender<ILoggingEvent> captured = new ListAppender<>();
    captured.start();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.addAppender(captured);
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.training-runner.trinity-endpoint", "http://ray:S3cretPw@trinity-rft-service:8080"))
        .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-startline-")), false)))) {
      List<String> up = new ArrayList<>();
      synchronized (captured) {
        for (ILoggingEvent e : new ArrayList<>(captured.list)) {
          if (e.getFormattedMessage().startsWith("training node up:")) up.add(e.getFormattedMessage());
        }
      }
      assertEquals(1, up.size(), up.toString());
      assertTrue(up.get(0).contains("training jobs to ray-jobs at http://trinity-rft-service:8080"), up.get(0));
      assertFalse(up.get(0).contains("S3cretPw"), up.get(0));
    } finally {
      root.detachAppender(captured);
    }
  }
}
