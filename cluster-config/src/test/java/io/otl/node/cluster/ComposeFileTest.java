package io.otl.node.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docker/compose.yml and docker/Dockerfile describe the deployment the other tests prove: the same
 * main class and sub-commands, the same environment variables (each one read by the node), health
 * checks on every service, and the published ports of the README.
 */
class ComposeFileTest {
  private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
  private static final List<String> NODES = List.of("node1", "node2", "node3");
  private static JsonNode services;
  private static String dockerfile;

  @BeforeAll
  static void parse() throws IOException {
    JsonNode compose = new YAMLMapper().readTree(ROOT.resolve("docker/compose.yml").toFile());
    services = compose.path("services");
    dockerfile = Files.readString(ROOT.resolve("docker/Dockerfile"));
  }

  @Test
  void hasPostgresKafkaThreeNodesAndTheSimulator() {
    Set<String> names = new TreeSet<>();
    services.fieldNames().forEachRemaining(names::add);
    assertEquals(new TreeSet<>(List.of("postgres", "kafka", "node1", "node2", "node3", "simulator")), names);
    assertEquals("postgres:15", services.path("postgres").path("image").asText());
    assertEquals("apache/kafka:3.9.1", services.path("kafka").path("image").asText());
    JsonNode kafkaEnv = services.path("kafka").path("environment");
    assertEquals("broker,controller", kafkaEnv.path("KAFKA_PROCESS_ROLES").asText(), "one combined KRaft node");
    assertEquals("PLAINTEXT://kafka:9092", kafkaEnv.path("KAFKA_ADVERTISED_LISTENERS").asText());
    assertEquals("1", kafkaEnv.path("KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR").asText(),
        "a single broker needs replication factor 1 for consumer groups (design §10)");
  }

  /**
   * The kafkadata volume was declared and mounted, but Kafka wrote its logs elsewhere (the image's
   * default, inside the container): its topics did not outlive the container.
   */
  @Test
  void kafkaKeepsItsDataOnItsVolume() throws IOException {
    String logDirs = services.path("kafka").path("environment").path("KAFKA_LOG_DIRS").asText();
    assertEquals("/var/lib/kafka/data", logDirs);
    assertTrue(strings(services.path("kafka").path("volumes")).contains("kafkadata:" + logDirs),
        "mounted where Kafka writes: " + services.path("kafka").path("volumes"));
    JsonNode volumes = new YAMLMapper().readTree(ROOT.resolve("docker/compose.yml").toFile()).path("volumes");
    assertTrue(volumes.has("kafkadata"), "named volume declared");
  }

  /**
   * The simulator's job records were written inside its container: a recreated container forgot every
   * job (trial t82). Its --work-dir is on a named volume, which the image creates owned by its user.
   */
  @Test
  void theSimulatorKeepsItsJobRecordsOnAVolume() throws IOException {
    List<String> command = strings(services.path("simulator").path("command"));
    String workDir = command.get(command.indexOf("--work-dir") + 1);
    assertTrue(strings(services.path("simulator").path("volumes")).contains("simulator:" + workDir),
        "mounted where the simulator writes: " + services.path("simulator").path("volumes"));
    JsonNode volumes = new YAMLMapper().readTree(ROOT.resolve("docker/compose.yml").toFile()).path("volumes");
    assertTrue(volumes.has("simulator"), "named volume declared");
    assertTrue(Files.readString(ROOT.resolve("docker/Dockerfile")).contains("mkdir -p " + workDir),
        "the image creates " + workDir + " for its user, so the empty volume is not root's");
  }

  @Test
  void everyServiceHasAHealthCheckAndNodesWaitForHealthyDependencies() {
    services.fields().forEachRemaining(e -> assertFalse(
        e.getValue().path("healthcheck").path("test").isMissingNode(), e.getKey() + " has no healthcheck"));
    String pgReady = text(services.path("postgres").path("healthcheck").path("test"));
    assertTrue(pgReady.contains("pg_isready"), pgReady);
    // Trial t82: without -h, pg_isready asks the Unix socket, which the image's first-start initialization
    // serves alone (listen_addresses=''): healthy before postgres:5432 accepts the nodes' connections.
    assertTrue(Pattern.compile("pg_isready .*-h (127\\.0\\.0\\.1|localhost)\\b").matcher(pgReady).find(), pgReady);
    assertTrue(text(services.path("kafka").path("healthcheck").path("test")).contains("kafka-broker-api-versions"));
    for (String node : NODES) {
      JsonNode s = services.path(node);
      String probe = text(s.path("healthcheck").path("test"));
      assertTrue(probe.contains("io.otl.node.HealthProbe") && probe.contains("/health/ready"), node + ": " + probe);
      for (String dep : List.of("postgres", "kafka", "simulator")) {
        assertEquals("service_healthy", s.path("depends_on").path(dep).path("condition").asText(), node + " -> " + dep);
      }
    }
    assertTrue(text(services.path("simulator").path("healthcheck").path("test")).contains("http://127.0.0.1:8265/health"));
  }

  @Test
  void nodesRunTheSameMainAndSubCommandsAsTheTests() {
    for (String node : NODES) {
      assertEquals(List.of(NodeProcess.RUN), strings(services.path(node).path("command")), node);
    }
    List<String> sim = strings(services.path("simulator").path("command"));
    assertEquals("simulator", sim.get(0));
    assertEquals(List.of("simulator", "--host", "0.0.0.0", "--port", "8265"), sim.subList(0, 5));
    // Jobs run longer than the nodes' poll interval (10 s), so the coordinator sees them RUNNING.
    int running = sim.indexOf("--running");
    assertTrue(running > 0 && java.time.Duration.parse("PT" + sim.get(running + 1).toUpperCase()).getSeconds() > 10,
        sim.toString());
    assertTrue(dockerfile.contains("exec java $JAVA_OPTS -jar /app/otl-node.jar \\\"$@\\\""),
        "ENTRYPOINT runs the jar with the compose command as arguments");
    assertTrue(dockerfile.contains("CMD [\"run\"]"));
    assertTrue(dockerfile.contains("FROM maven:3.9-eclipse-temurin-17 AS build"));
    assertTrue(dockerfile.contains("FROM eclipse-temurin:17-jre"));
    assertTrue(dockerfile.contains("mvn -B -q package -DskipTests"));
    assertTrue(Pattern.compile("(?m)^USER otl$").matcher(dockerfile).find(), "runs as a non-root user");
    assertTrue(dockerfile.contains("HEALTHCHECK") && dockerfile.contains("io.otl.node.HealthProbe"));
    // The jar's Main-Class is the class the tests start.
    String pom = read(ROOT.resolve("cluster-config/pom.xml"));
    assertTrue(pom.contains("<mainClass>" + NodeProcess.MAIN_CLASS + "</mainClass>"));
    assertTrue(pom.contains("<finalName>otl-node</finalName>"));
  }

  @Test
  void nodesUseTheDocumentedVariablesAndPorts() {
    for (int i = 0; i < NODES.size(); i++) {
      String node = NODES.get(i);
      JsonNode env = services.path(node).path("environment");
      Set<String> names = new TreeSet<>();
      env.fieldNames().forEachRemaining(names::add);
      Set<String> expected = new TreeSet<>(NodeProcess.COMPOSE_NODE_ENV);
      expected.add("JAVA_OPTS");
      assertEquals(expected, names, node + ": the variables the crash test gives its node processes");
      assertEquals(node, env.path("OTL_HOSTNAME").asText());
      assertEquals("25520", env.path("OTL_CLUSTER_PORT").asText());
      assertEquals("pekko://otl@node1:25520,pekko://otl@node2:25520,pekko://otl@node3:25520",
          env.path("OTL_SEED_NODES").asText());
      assertEquals("8080", env.path("OTL_HTTP_PORT").asText());
      assertEquals("postgres", env.path("OTL_PERSISTENCE").asText());
      assertTrue(env.path("OTL_DB_URL").asText().startsWith("jdbc:postgresql://postgres:5432/"));
      assertEquals("false", env.path("OTL_SIMULATOR_ENABLED").asText());
      assertEquals("http://simulator:8265", env.path("OTL_TRINITY_ENDPOINT").asText());
      // Without a simulator in the node, serving.backend = auto is static with no base model: no v0,
      // and the gateway answered 404 model_not_found. The simulator's model face serves v0 and the adapters.
      assertEquals("vllm-lora", env.path("OTL_SERVING_BACKEND").asText());
      assertEquals("http://simulator:8265", env.path("OTL_VLLM_URL").asText());
      assertEquals("kafka:9092", env.path("OTL_KAFKA_BOOTSTRAP").asText());
      assertEquals(List.of((8080 + i) + ":8080"), strings(services.path(node).path("ports")));
    }
  }

  /**
   * A training job is files: the node writes the Trinity config and datasets under dataset-dir, the
   * simulator (Trinity's workers) reads them and writes checkpoints under checkpoint-root-dir, and
   * the node reads the checkpoint's metrics back, all by absolute path. Without shared volumes every
   * job in compose failed "FileNotFoundError: config file /app/datasets/... does not exist".
   */
  @Test
  void nodesAndTheSimulatorShareTheTrainingFilesAtTheSamePaths() throws IOException {
    String core = Files.readString(ROOT.resolve("core-actors/src/main/resources/reference.conf"));
    assertTrue(core.contains("dataset-dir = \"./datasets\"") && core.contains("checkpoint-root-dir = \"./checkpoints\""),
        "defaults relative to the working directory /app");
    assertTrue(Pattern.compile("(?m)^WORKDIR /app$").matcher(dockerfile).find());
    List<String> shared = List.of("datasets:/app/datasets", "checkpoints:/app/checkpoints");
    for (String service : List.of("simulator", "node1", "node2", "node3")) {
      assertTrue(strings(services.path(service).path("volumes")).containsAll(shared),
          service + " mounts " + strings(services.path(service).path("volumes")));
    }
    JsonNode volumes = new YAMLMapper().readTree(ROOT.resolve("docker/compose.yml").toFile()).path("volumes");
    assertTrue(volumes.has("datasets") && volumes.has("checkpoints"), "named volumes declared");
    assertTrue(dockerfile.contains("mkdir -p /app/data/simulator /app/datasets /app/checkpoints && chown -R otl:otl /app"),
        "the mount points exist and belong to otl, so fresh named volumes are writable by the node");
  }

  @Test
  void everyOtlVariableInComposeIsReadByTheNode() throws IOException {
    Set<String> used = new LinkedHashSet<>();
    services.fields().forEachRemaining(s -> s.getValue().path("environment").fieldNames().forEachRemaining(n -> {
      if (n.startsWith("OTL_")) used.add(n);
    }));
    String sources = mainSources();
    String configurationPage = Files.readString(ROOT.resolve("docs/configuration.md"));
    List<String> unread = new ArrayList<>();
    for (String name : used) {
      assertTrue(configurationPage.contains("| `" + name + "`") || configurationPage.contains(", `" + name + "`"),
          name + " is not in docs/configuration.md's table of the variables the node reads");
      boolean read = Pattern.compile("\"" + name + "\"|\\$\\{\\?" + name + "}").matcher(sources).find();
      if (read) continue;
      if (NodeProcess.PENDING_ENV.containsKey(name)) {
        System.out.println("PENDING: " + name + " is set in compose.yml but not read yet; waits for "
            + NodeProcess.PENDING_ENV.get(name));
      } else {
        unread.add(name);
      }
    }
    assertEquals(List.of(), unread, "OTL_* variables in compose.yml that no main source or .conf reads");
  }

  /**
   * docker/README.md's commands name services compose.yml has, and its tools run the jar the image holds
   * (the offline tools' lines were added in trial t82).
   */
  @Test
  void theReadmesComposeCommandsNameItsServices() throws IOException {
    String readme = Files.readString(ROOT.resolve("docker/README.md"));
    java.util.regex.Matcher m = Pattern.compile(
        "docker compose -f docker/compose\\.yml (?:exec|kill|start|stop|logs -f|run --rm --no-deps) (\\w+)").matcher(readme);
    int seen = 0;
    for (; m.find(); seen++) assertTrue(services.has(m.group(1)), "no service " + m.group(1) + " in compose.yml: " + m.group());
    assertTrue(seen >= 5, "the README's compose commands: " + seen);
    assertTrue(readme.contains("exec node1 java -jar /app/otl-node.jar audit verify")
        && dockerfile.contains("/app/otl-node.jar"), "the tools run the image's jar");
  }

  /** docker/README.md gives the simulator's command as compose runs it (it left out --work-dir and --running: trial t175). */
  @Test
  void theReadmeGivesTheSimulatorsCommandAsComposeRunsIt() throws IOException {
    String readme = Files.readString(ROOT.resolve("docker/README.md"));
    String command = String.join(" ", strings(services.path("simulator").path("command")));
    assertTrue(readme.contains("| otl-node, `" + command + "` |"), "the services table: " + command);
    assertTrue(readme.contains("`... " + command + "`"), "the opening paragraph: " + command);
  }

  /** docker/README.md names each variable compose gives a node. */
  @Test
  void theReadmeNamesEveryNodeVariable() throws IOException {
    String readme = Files.readString(ROOT.resolve("docker/README.md"));
    services.path("node1").path("environment").fieldNames().forEachRemaining(
        name -> assertTrue(readme.contains("`" + name), "docker/README.md does not name " + name));
  }

  /** Every main Java source and resource of the node's modules, concatenated. */
  private static String mainSources() throws IOException {
    List<Path> files;
    try (Stream<Path> walk = Files.walk(ROOT)) {
      files = walk.filter(p -> p.toString().replace('\\', '/').contains("/src/main/"))
          .filter(p -> !p.toString().contains("/target/"))
          // The benchmarks start nodes with these variables: a name found there is set, not read.
          .filter(p -> !ROOT.relativize(p).startsWith("benchmarks"))
          .filter(p -> p.toString().endsWith(".java") || p.toString().endsWith(".conf"))
          .collect(Collectors.toList());
    }
    StringBuilder all = new StringBuilder();
    for (Path f : files) all.append(Files.readString(f)).append('\n');
    return all.toString();
  }

  /** A compose value as one string (an exec-form array joined by spaces); shared with {@link DockerImageTest}. */
  static String text(JsonNode node) {
    return node.isArray() ? String.join(" ", strings(node)) : node.asText();
  }

  static List<String> strings(JsonNode node) {
    List<String> out = new ArrayList<>();
    for (Iterator<JsonNode> it = node.elements(); it.hasNext(); ) out.add(it.next().asText());
    return out;
  }

  static String read(Path p) {
    try {
      return Files.readString(p);
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }
}
