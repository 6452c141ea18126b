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
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

  /**
   * Trial t59: with {@code OTL_SIMULATOR_PORT=0} ("0 picks a free one") the simulator and v0's model face
   * were on the picked port while the line, and every job submission, said {@code http://127.0.0.1:0}.
   */
  @Test
  void jobsGoToTheSimulatorsPickedPortWhenItsPortIsZero() throws Exception {
    ListAppender<ILoggingEvent> captured = new ListAppender<>();
    captured.start();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.addAppender(captured);
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.simulator.enabled", true, "agentscope.training.simulator.port", 0))
        .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-startline-")), false)))) {
      String up;
      synchronized (captured) {
        up = captured.list.stream().map(ILoggingEvent::getFormattedMessage)
            .filter(m -> m.startsWith("training node up:")).findFirst().orElseThrow();
      }
      Matcher target = Pattern.compile("training jobs to ray-jobs at http://127\\.0\\.0\\.1:(\\d+), Trinity SIMULATOR on port (\\d+)")
          .matcher(up);
      assertTrue(target.find(), up);
      assertEquals(target.group(2), target.group(1), up);
      assertFalse(target.group(1).equals("0"), up);
      HttpResponse<String> rayVersion = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
          URI.create("http://127.0.0.1:" + target.group(1) + "/api/version")).build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, rayVersion.statusCode(), rayVersion.body());
    } finally {
      root.detachAppender(captured);
    }
  }
}
