package io.otl.node.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The AgentScope {@code model} section's {@code api_key} is the key of its {@code base_url}: a gateway
 * call routed to v0 must carry it, as the agent's own OpenAI client did before it pointed at the node.
 * The key was parsed and then dropped, so a real provider behind v0 answered 401 to every call.
 */
class ModelSectionKeyTest {

  @Test
  void aCallToV0CarriesTheModelSectionsKeyToItsBaseUrl() throws Exception {
    List<String> authorizations = new CopyOnWriteArrayList<>();
    HttpServer provider = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    provider.createContext("/api/chat/completions", exchange -> {
      exchange.getRequestBody().readAllBytes();
      authorizations.add(String.valueOf(exchange.getRequestHeaders().getFirst("Authorization")));
      byte[] body = ("{\"id\":\"chatcmpl-k1\",\"object\":\"chat.completion\",\"created\":1,\"model\":\"gpt-4o-mini\","
          + "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"hello\"},"
          + "\"finish_reason\":\"stop\"}]}").getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().add("Content-Type", "application/json");
      exchange.sendResponseHeaders(200, body.length);
      exchange.getResponseBody().write(body);
      exchange.close();
    });
    provider.start();
    Path dir = TestDatabases.outputDir("model-key");
    // config.toml's model section as AgentScope users write it, its base_url on this machine.
    Path toml = Files.writeString(dir.resolve("config.toml"), String.join("\n",
        "[model]",
        "provider = \"openai-compatible\"",
        "base_url = \"http://127.0.0.1:" + provider.getAddress().getPort() + "/api\"",
        "api_key = \"sk-model-section-key\"",
        "model_name = \"gpt-4o-mini\"",
        "timeout_seconds = 60",
        "max_retries = 3", ""));
    try (TrainingNode node = TrainingNode.start(Optional.of(toml), TestDatabases.node(TestDatabases.h2(dir), true))) {
      Http.Response r = new Http(node.httpPort()).chat("key-bot", "key-s-1", "Hi", false);

      assertEquals(200, r.status(), r.body());
      assertTrue(r.body().contains("hello"), r.body());
      assertEquals(List.of("Bearer sk-model-section-key"), authorizations);
    } finally {
      provider.stop(0);
    }
  }
}
