package io.otl.node.config;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * v0's server written as the node's own URL (its agents use the node as their base_url, so the mistake is a
 * natural one): every call of v0 re-entered the node's gateway (trial t121). Start-up refuses it in one line.
 */
class OwnListenerUrlsTest {

  private static Path toml(String baseUrl) throws Exception {
    Files.createDirectories(Path.of("target"));
    Path dir = Files.createTempDirectory(Path.of("target"), "own-listener");
    return TestFiles.write(dir, "node.toml", "[model]\nbase_url = \"" + baseUrl + "\"\nmodel_name = \"m\"\n");
  }

  private static com.typesafe.config.Config port(int port) {
    return ConfigFactory.parseMap(Map.of("agentscope.training.http.port", port));
  }

  private static String refusal(String baseUrl, com.typesafe.config.Config base) throws Exception {
    Path file = toml(baseUrl);
    ConfigValidationException e = assertThrows(ConfigValidationException.class,
        () -> NodeConfig.resolve(Optional.of(file), base, Map.of()), baseUrl);
    return e.getMessage();
  }

  @Test
  void v0AtTheNodesOwnListenerStopsStartUpNamingTheKey() throws Exception {
    // The node listens on 0.0.0.0:8080 by default: every local address with that port is the node.
    for (String url : new String[] {"http://localhost:8080/v1", "http://127.0.0.1:8080/v1", "http://0.0.0.0:8080",
        "http://[::1]:8080/v1/chat/completions"}) {
      String message = refusal(url, ConfigFactory.empty());
      assertTrue(message.contains("agentscope.model.base_url = \"" + url + "\": must be the URL of the model server"),
          message);
      assertTrue(message.contains("not this node's own HTTP listener"), message);
    }
    // http.port (OTL_HTTP_PORT) moves the listener, and the check with it.
    String moved = refusal("http://localhost:9090/v1", port(9090));
    assertTrue(moved.contains("not this node's own HTTP listener"), moved);
  }

  @Test
  void anotherPortOrHostIsV0sServer() throws Exception {
    for (String url : new String[] {"http://localhost:8000/v1", "http://vllm:8080/v1", "http://10.1.2.3:8000/v1"}) {
      Path file = toml(url);
      assertDoesNotThrow(() -> NodeConfig.resolve(Optional.of(file), ConfigFactory.empty(), Map.of()), url);
    }
    // A node on a picked port (0) cannot be told by its URL: the first call finds the loop (GatewayLoopTest).
    Path file = toml("http://localhost:8080/v1");
    assertDoesNotThrow(() -> NodeConfig.resolve(Optional.of(file), port(0), Map.of()));
  }
}
