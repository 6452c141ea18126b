package io.otl.node.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigResolveOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docker/Dockerfile and the ports and health checks of docker/compose.yml against the node: no Docker
 * engine runs them here, so what they name must be what the jar has and listens on ({@link ComposeFileTest}
 * checks the services and variables).
 */
class DockerImageTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final List<String> NODES = List.of("node1", "node2", "node3");
  private static JsonNode services;
  private static String dockerfile;

  @BeforeAll
  static void parse() throws IOException {
    services = new YAMLMapper().readTree(ROOT.resolve("docker/compose.yml").toFile()).path("services");
    dockerfile = Files.readString(ROOT.resolve("docker/Dockerfile"));
  }

  /**
   * The image exposed 7626 (pekko-management), which nothing in it or in compose turns on: a port that
   * no container listens on. Exposed and published ports are the node's own listeners, at its defaults
   * (the HTTP API, the cluster, the simulator), and every health check asks the port its service listens on.
   */
  @Test
  void exposedAndPublishedPortsAreListenersOfTheNode() {
    Config defaults = ConfigFactory.parseFile(ROOT.resolve("cluster-config/src/main/resources/reference.conf").toFile())
        .withFallback(ConfigFactory.parseFile(ROOT.resolve("cluster-config/src/main/resources/otl-node.conf").toFile()))
        .resolve(ConfigResolveOptions.noSystem().setAllowUnresolved(true));
    String t = "agentscope.training.";
    int http = defaults.getInt(t + "http.port");
    int cluster = defaults.getInt("pekko.remote.artery.canonical.port");
    int simulator = defaults.getInt(t + "simulator.port");
    java.util.regex.Matcher expose = Pattern.compile("(?m)^EXPOSE (.+)$").matcher(dockerfile);
    assertTrue(expose.find(), "the Dockerfile has an EXPOSE line");
    assertEquals(new TreeSet<>(List.of(http, cluster, simulator)),
        Stream.of(expose.group(1).trim().split("\\s+")).map(Integer::valueOf).collect(Collectors.toCollection(TreeSet::new)),
        "the image exposes the HTTP API, the cluster and the simulator, nothing else");
    assertFalse(expose.find(), "one EXPOSE line");
    assertTrue(dockerfile.contains("OTL_HTTP_PORT=" + http) && dockerfile.contains("OTL_CLUSTER_PORT=" + cluster));
    for (String node : NODES) {
      JsonNode s = services.path(node);
      String port = s.path("environment").path("OTL_HTTP_PORT").asText();
      for (String published : ComposeFileTest.strings(s.path("ports"))) {
        assertTrue(published.endsWith(":" + port), node + " publishes " + published + " but listens on " + port);
      }
      assertTrue(ComposeFileTest.text(s.path("healthcheck").path("test")).contains("http://127.0.0.1:" + port + "/health/ready"), node);
    }
    List<String> sim = ComposeFileTest.strings(services.path("simulator").path("command"));
    String simPort = sim.get(sim.indexOf("--port") + 1);
    assertEquals(List.of(simPort + ":" + simPort), ComposeFileTest.strings(services.path("simulator").path("ports")));
    assertTrue(ComposeFileTest.text(services.path("simulator").path("healthcheck").path("test"))
        .contains("http://127.0.0.1:" + simPort + "/health"));
  }

  /** The probe every health check runs is a class of the jar, with a main method. */
  @Test
  void healthChecksRunAClassOfTheJar() throws Exception {
    List<String> checks = new ArrayList<>();
    services.fields().forEachRemaining(e -> checks.add(ComposeFileTest.text(e.getValue().path("healthcheck").path("test"))));
    checks.add(dockerfile.substring(dockerfile.indexOf("HEALTHCHECK")));
    int seen = 0;
    for (String check : checks) {
      java.util.regex.Matcher m = Pattern.compile("-cp /app/otl-node\\.jar (io\\.otl\\.[\\w.]+)|\"-cp\", \"/app/otl-node\\.jar\", \"(io\\.otl\\.[\\w.]+)\"")
          .matcher(check);
      while (m.find()) {
        String name = m.group(1) != null ? m.group(1) : m.group(2);
        Class.forName(name).getMethod("main", String[].class);
        seen++;
      }
    }
    assertEquals(5, seen, "the Dockerfile's, the simulator's and three nodes' health checks: " + checks);
  }

  /**
   * The build stage copies each module's pom before the sources, so that dependency:go-offline can read the
   * reactor; a module missing there makes that step fail (hidden by its "|| true") and every build download again.
   */
  @Test
  void theBuildStageCopiesEveryModulesPom() {
    String pom = ComposeFileTest.read(ROOT.resolve("pom.xml"));
    String modules = pom.substring(pom.indexOf("<modules>"), pom.indexOf("</modules>"));
    java.util.regex.Matcher m = Pattern.compile("<module>([^<]+)</module>").matcher(modules);
    int seen = 0;
    for (; m.find(); seen++) {
      assertTrue(dockerfile.contains("COPY " + m.group(1) + "/pom.xml " + m.group(1) + "/"), "COPY " + m.group(1) + "/pom.xml");
    }
    assertTrue(seen >= 5, "modules found: " + seen);
  }
}
