package io.otl.node.simulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The {@code simulator} command's model face, called by AgentScope Java (trial t19): each call's
 * {@code User-Agent: agentscope-java/1.0.9; java/17…} is a header pekko-http cannot parse, and the
 * command's actor system (not the node's, whose otl-node.conf turns these warnings off) logged a WARN
 * with the header's whole value, whatever it held.
 */
class SimulatorHeaderLogTest {
  @Test
  void anUnparsableHeaderIsNotLoggedWithItsValue() throws Exception {
    ListAppender<ILoggingEvent> lines = new ListAppender<>();
    lines.start();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.addAppender(lines);
    Path dir = Files.createTempDirectory("simulator-header-log");
    ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "trinity-simulator", SimulatorCommand.config());
    try {
      TrinitySimulator simulator = TrinitySimulator.start(system,
          SimulatorSettings.defaults().withPort(0).withWorkDir(dir));
      HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
              URI.create(simulator.baseUrl() + "/v1/chat/completions"))
          .header("Content-Type", "application/json")
          .header("User-Agent", "agentscope-java/1.0.9; java/17.0.15; jo@example.com")
          .POST(HttpRequest.BodyPublishers.ofString(
              "{\"model\":\"default\",\"messages\":[{\"role\":\"user\",\"content\":\"Hi\"}]}"))
          .build(), HttpResponse.BodyHandlers.ofString());
      assertEquals(200, r.statusCode(), r.body());
      Thread.sleep(500); // pekko's log events reach SLF4J through an actor
      List<String> said = lines.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
      assertTrue(said.stream().noneMatch(l -> l.contains("jo@example.com") || l.contains("Illegal")), said.toString());
      simulator.stop();
    } finally {
      root.detachAppender(lines);
      system.terminate();
    }
  }
}
