package io.otl.node.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * A listen host that does not resolve stopped start-up at the bind, after the journal was created,
 * with Pekko's "Bind failed … UnresolvedAddressException" naming no key (trial t47). It is refused with
 * the other settings now, naming the key and the variable it came from.
 */
class ListenHostKeyTest {
  private static final String HOST = "agentscope.training.http.host";

  @Test
  void aHostFromTheEnvironmentThatDoesNotResolveNamesKeyAndVariable() {
    String m = assertThrows(ConfigValidationException.class, () -> NodeConfig.resolve(Optional.empty(),
        ConfigFactory.parseMap(Map.of(HOST, "no.such.host.invalid"), EnvironmentVariables.SUBSTITUTED), Map.of()))
        .getMessage();
    assertTrue(m.contains(HOST + " = \"no.such.host.invalid\" (from environment variable OTL_HTTP_HOST): must be"
        + " an address of this machine to listen on"), m);
    assertTrue(m.contains("does not resolve"), m);
  }

  @Test
  void aHostFromAFileNamesTheKey() {
    ConfigValidationException e = assertThrows(ConfigValidationException.class, () -> NodeConfig.resolve(
        Optional.empty(), ConfigFactory.parseString(HOST + " = no.such.host.invalid"), Map.of()));
    assertEquals(1, e.errors().size(), e.getMessage());
    assertTrue(e.errors().get(0).startsWith(HOST + " = \"no.such.host.invalid\": must be"), e.getMessage());
  }

  @Test
  void addressesAndNamesThatResolvePass() {
    for (String host : new String[] {"0.0.0.0", "127.0.0.1", "::", "localhost"}) {
      assertEquals(List.of(), ListenHostKey.errors(ConfigFactory.parseMap(Map.of(HOST, host))), host);
    }
  }
}
