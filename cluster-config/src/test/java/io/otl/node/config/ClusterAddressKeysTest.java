package io.otl.node.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * An operator's wrong port, host or seed list stops the start with the key and the variable named,
 * before the journal is touched. Trial t44: {@code OTL_HTTP_PORT=99999} stopped with "port out of
 * range:99999", {@code OTL_CLUSTER_PORT=abc} with "env variables: port has type STRING rather than
 * NUMBER", {@code OTL_SEED_NODES=garbage} with "java.lang.RuntimeException (without a message)", each
 * after the node had created its journal.
 */
class ClusterAddressKeysTest {

  /** Values as Typesafe Config gives them when {@code key = ${?OTL_X}} takes them from the environment. */
  private static Config fromEnvironment(Map<String, Object> values) {
    return ConfigFactory.parseMap(values, EnvironmentVariables.SUBSTITUTED);
  }

  private static String refusal(Config base, Map<String, String> env) {
    return assertThrows(ConfigValidationException.class,
        () -> NodeConfig.resolve(Optional.empty(), base, env)).getMessage();
  }

  @Test
  void portsOutOfRangeAreRefusedNamingKeyAndVariable() {
    String m = refusal(fromEnvironment(Map.of("agentscope.training.http.port", "99999",
        "agentscope.training.simulator.port", "70000", "agentscope.training.otlp.port", "65536")), Map.of());
    assertTrue(m.contains("agentscope.training.http.port = \"99999\" (from environment variable OTL_HTTP_PORT): "
        + "must be an integer from 0 to 65535"), m);
    assertTrue(m.contains("agentscope.training.simulator.port = \"70000\" (from environment variable OTL_SIMULATOR_PORT)"), m);
    assertTrue(m.contains("agentscope.training.otlp.port = \"65536\" (from environment variable OTL_OTLP_PORT): "
        + "must be an integer from -1 to 65535"), m);
  }

  /**
   * Trial t59: {@code OTL_SIMULATOR_PORT=-1} was reported twice, the second time as
   * {@code trinity-endpoint = "http://127.0.0.1:-1"}, which the node derives and the operator never wrote.
   */
  @Test
  void aWrongSimulatorPortIsOneErrorNotAlsoTheEndpointDerivedFromIt() {
    String m = refusal(fromEnvironment(Map.of("agentscope.training.simulator.port", "-1")), Map.of());
    assertTrue(m.contains("agentscope.training.simulator.port = \"-1\" (from environment variable OTL_SIMULATOR_PORT): "
        + "must be an integer from 0 to 65535"), m);
    assertTrue(m.contains("(1 error)"), m);
    assertTrue(!m.contains("trinity-endpoint"), m);
    String written = refusal(ConfigFactory.parseMap(Map.of("agentscope.training.simulator.port", -1,
        "agentscope.training.training-runner.trinity-endpoint", "ftp://ray-head:8265")), Map.of());
    assertTrue(written.contains("agentscope.training.training-runner.trinity-endpoint = \"ftp://ray-head:8265\": must be"),
        "an endpoint the operator wrote is still checked: " + written);
  }

  @Test
  void aWrongValueFromAnyNodeVariableNamesTheVariable() {
    String m = refusal(fromEnvironment(Map.of("agentscope.training.simulator.enabled", "maybe")), Map.of());
    assertTrue(m.contains("agentscope.training.simulator.enabled = \"maybe\" (from environment variable "
        + "OTL_SIMULATOR_ENABLED): must be true or false"), m);
  }

  /** Trial t61: {@code OTL_KAFKA_GROUP_INSTANCE_ID="a b"} was refused naming the key alone, by KafkaSettings. */
  @Test
  void aWrongKafkaGroupInstanceIdNamesItsVariable() {
    String m = refusal(fromEnvironment(Map.of("agentscope.training.kafka.group-instance-id", "a b")), Map.of());
    assertTrue(m.contains("agentscope.training.kafka.group-instance-id = \"a b\" (from environment variable "
        + "OTL_KAFKA_GROUP_INSTANCE_ID): must be empty (derived from the cluster address) or 1-249 characters of "
        + "[A-Za-z0-9._:-]"), m);
    NodeConfig.resolve(Optional.empty(), fromEnvironment(Map.of("agentscope.training.kafka.group-instance-id",
        "node-a.1:x")), Map.of());
  }

  @Test
  void theClusterPortAndHostAreChecked() {
    String m = refusal(fromEnvironment(Map.of(ClusterAddressKeys.PORT, "abc", ClusterAddressKeys.HOSTNAME, " ")),
        Map.of());
    assertTrue(m.contains(ClusterAddressKeys.PORT + " = \"abc\" (from environment variable OTL_CLUSTER_PORT): "
        + "must be an integer from 0 to 65535"), m);
    assertTrue(m.contains(ClusterAddressKeys.HOSTNAME + " = \" \" (from environment variable OTL_HOSTNAME): must be "
        + "a host name or IP address"), m);
    String big = refusal(ConfigFactory.parseMap(Map.of(ClusterAddressKeys.PORT, 99999)), Map.of());
    assertTrue(big.contains(ClusterAddressKeys.PORT + " = 99999: must be an integer from 0 to 65535"), big);
  }

  /**
   * Trial t59: {@code OTL_HOSTNAME="a b"} and {@code OTL_HOSTNAME=no.such.host.invalid} passed the check,
   * the node created its journal, and the cluster port's bind failed with "the host to listen on does not
   * resolve: agentscope.training.http.host, env OTL_HTTP_HOST": the operator was sent to the wrong variable.
   */
  @Test
  void aClusterHostWithSpaceInsideOrThatDoesNotResolveIsRefusedNamingItsVariable() {
    String spaced = refusal(fromEnvironment(Map.of(ClusterAddressKeys.HOSTNAME, "a b")), Map.of());
    assertTrue(spaced.contains(ClusterAddressKeys.HOSTNAME + " = \"a b\" (from environment variable OTL_HOSTNAME): "
        + "must be a host name or IP address other nodes reach this node at, without white space"), spaced);
    assertEquals(1, spaced.lines().filter(l -> l.contains(ClusterAddressKeys.HOSTNAME)).count(), spaced);
    assertTrue(!spaced.contains("OTL_HTTP_HOST"), spaced);

    String unknown = refusal(fromEnvironment(Map.of(ClusterAddressKeys.HOSTNAME, "no.such.host.invalid")), Map.of());
    assertTrue(unknown.contains(ClusterAddressKeys.HOSTNAME + " = \"no.such.host.invalid\" (from environment variable "
        + "OTL_HOSTNAME): must be a host name or IP address of this machine"), unknown);
    assertTrue(unknown.contains("this name does not resolve"), unknown);
    assertTrue(!unknown.contains("OTL_HTTP_HOST"), unknown);
  }

  /** With a bind address of its own the cluster port does not listen on the advertised name (NAT, containers). */
  @Test
  void anAdvertisedHostThatDoesNotResolveHerePassesWhenTheClusterPortBindsElsewhere() {
    NodeConfig.resolve(Optional.empty(), ConfigFactory.parseString(
        "pekko.remote.artery.canonical.hostname = \"no.such.host.invalid\"\n"
        + "pekko.remote.artery.bind.hostname = \"127.0.0.1\""), Map.of());
  }

  /** Pekko's own tokens for this machine (its default is {@code <getHostAddress>}) are no names to resolve (review t63). */
  @Test
  void pekkosHostTokensPass() {
    for (String token : List.of("<getHostAddress>", "<getHostName>")) {
      NodeConfig.resolve(Optional.empty(), ConfigFactory.empty(), Map.of("OTL_HOSTNAME", token));
      NodeConfig.resolve(Optional.empty(), ConfigFactory.parseString(
          "pekko.remote.artery.canonical.hostname = \"" + token + "\""), Map.of());
    }
  }

  @Test
  void everySeedNodeMustBeANodeAddress() {
    String m = refusal(ConfigFactory.empty(), Map.of("OTL_SEED_NODES",
        "pekko://otl@127.0.0.1:25520, garbage,127.0.0.1:25522,pekko://other@h:1,pekko://otl@h"));
    for (String bad : List.of("garbage", "127.0.0.1:25522", "pekko://other@h:1", "pekko://otl@h")) {
      assertTrue(m.contains(ClusterAddressKeys.SEED_NODES + " = \"" + bad + "\" (from environment variable "
          + "OTL_SEED_NODES): must be a list of node addresses pekko://otl@<host>:<port>"), m);
    }
    assertTrue(!m.contains("25520\""), "a good seed is not listed: " + m);
    String file = refusal(ConfigFactory.parseString("pekko.cluster.seed-nodes = [\"node1:25520\"]"), Map.of());
    assertTrue(file.contains(ClusterAddressKeys.SEED_NODES + " = \"node1:25520\": must be"), file);
  }

  @Test
  void goodAddressesPass() {
    Config base = ConfigFactory.parseString("pekko.remote.artery.canonical { hostname = localhost, port = 25520 }\n"
        + "pekko.cluster.seed-nodes = [\"pekko://otl@node1:25520\", \"pekko://otl@10.0.0.2:25520\"]");
    NodeConfig.resolve(Optional.empty(), base,
        Map.of("OTL_SEED_NODES", "pekko://otl@node1:25520,pekko://otl@node2:25520"));
    assertEquals(List.of("pekko://otl@a:1", "pekko://otl@b:2"), ClusterAddressKeys.seedNodes(" pekko://otl@a:1 , pekko://otl@b:2"));
    assertEquals(List.of(), ClusterAddressKeys.seedNodes(" "));
  }
}
