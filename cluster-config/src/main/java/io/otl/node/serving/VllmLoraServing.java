package io.otl.node.serving;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.Sha256;
import io.otl.core.serving.ServingBackend;
import io.otl.core.serving.ServingException;
import io.otl.core.serving.ServingTarget;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletionStage;

/**
 * The {@code vllm-lora} serving backend: each version is a LoRA adapter loaded into one vLLM
 * server at runtime ({@code POST /v1/load_lora_adapter {"lora_name","lora_path"}}, {@code POST
 * /v1/unload_lora_adapter {"lora_name"}}; vLLM needs {@code VLLM_ALLOW_RUNTIME_LORA_UPDATING=True}
 * and {@code --enable-lora}).
 *
 * <p>The served model name is {@code <agent>-<version>-<first 8 hex of SHA-256(agent, version,
 * artifact)>}: unique to one version's weights, so a load answered "has already been loaded" (a call repeated after a
 * crash) means these weights are loaded, and an unload answered 404 means they are gone. Both are
 * taken as success. vLLM's other 4xx refusals (missing adapter path) are final; 5xx and connection
 * failures are retried by the caller.
 */
public final class VllmLoraServing implements ServingBackend {

  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final String root;
  private final String apiKey;
  private final Duration timeout;
  private final HttpClient http;

  /**
   * @param url the vLLM server's root ({@code http://host:8000}; a trailing {@code /v1} is dropped)
   * @param apiKey sent as bearer token when not empty (vLLM's {@code --api-key}); never logged
   */
  public VllmLoraServing(String url, String apiKey, Duration timeout) {
    String r = url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
    this.root = r.endsWith("/v1") ? r.substring(0, r.length() - 3) : r;
    this.apiKey = apiKey == null ? "" : apiKey;
    this.timeout = timeout;
    this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
  }

  @Override
  public String name() {
    return "vllm-lora";
  }

  @Override
  public ServingTarget target(String agentId, String version, String artifact, String registeredEndpoint) {
    return new ServingTarget(root + "/v1", servedName(agentId, version, artifact));
  }

  /**
   * {@code <agent>-<version>-<hash8>}, restricted to characters every client accepts in a model
   * name. The readable part is lower-cased and cleaned, so it alone does not tell agents and
   * versions apart ({@code Bot}/{@code bot}, {@code a-b}+{@code c}/{@code a}+{@code b-c}, {@code
   * v1:x}/{@code v1+x}): the hash covers agent, version and artifact. Hashing the artifact alone
   * gave two agents that registered one adapter directory the same served name, and one agent's
   * rollback unloaded the other's canary (trial t85).
   */
  static String servedName(String agentId, String version, String artifact) {
    String hash = Sha256.hex(agentId + '\u0000' + version + '\u0000' + artifact, 4);
    return (clean(agentId) + "-" + clean(version) + "-" + hash).toLowerCase(Locale.ROOT);
  }

  private static String clean(String s) {
    return s.replaceAll("[^A-Za-z0-9._-]", "_");
  }

  @Override
  public boolean callsServer() {
    return true;
  }

  @Override
  public CompletionStage<Void> deploy(ServingTarget target, String artifact) {
    String body = MAPPER.createObjectNode()
        .put("lora_name", target.servedModel())
        .put("lora_path", localPath(artifact))
        .toString();
    return post("/v1/load_lora_adapter", body).thenApply(r -> {
      if (r.statusCode() == 200) {
        return null;
      }
      String message = message(r.body());
      if (r.statusCode() == 400 && message.contains("has already been loaded")) {
        return null;
      }
      if (r.statusCode() == 404 && isMissingRoute(r.body())) {
        throw new ServingException("vLLM at " + root + " has no runtime LoRA API (POST /v1/load_lora_adapter answered "
            + "404 " + message + "): start vLLM with --enable-lora and the environment variable "
            + "VLLM_ALLOW_RUNTIME_LORA_UPDATING=True, then promote the version again", false);
      }
      throw new ServingException("vLLM refused to load " + target.servedModel() + " (HTTP " + r.statusCode()
          + "): " + message, r.statusCode() >= 500 || r.statusCode() == 429);
    });
  }

  /** vLLM takes a local path (or a Hugging Face id): a {@code file:} URI is turned into its path. */
  static String localPath(String artifact) {
    if (artifact.startsWith("file:")) {
      try {
        return java.nio.file.Path.of(URI.create(artifact)).toString();
      } catch (IllegalArgumentException | java.nio.file.FileSystemNotFoundException e) {
        return artifact.substring("file:".length()).replaceFirst("^//", "");
      }
    }
    return artifact;
  }

  @Override
  public CompletionStage<Void> undeploy(ServingTarget target) {
    String body = MAPPER.createObjectNode().put("lora_name", target.servedModel()).toString();
    return post("/v1/unload_lora_adapter", body).thenApply(r -> {
      // An adapter vLLM does not have is unloaded already: 404 NotFoundError, and 400 "cannot be
      // found" from vLLM releases before NotFoundError existed.
      if (r.statusCode() == 200 || r.statusCode() == 404
          || (r.statusCode() == 400 && isUnknownAdapter(message(r.body())))) {
        return null;
      }
      throw new ServingException("vLLM refused to unload " + target.servedModel() + " (HTTP "
          + r.statusCode() + "): " + message(r.body()), true);
    });
  }

  static boolean isUnknownAdapter(String message) {
    String m = message.toLowerCase(Locale.ROOT);
    return m.contains("cannot be found") || m.contains("not found");
  }

  private CompletionStage<HttpResponse<String>> post(String path, String body) {
    HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(root + path))
        .timeout(timeout)
        .header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body));
    if (!apiKey.isEmpty()) {
      req.header("Authorization", "Bearer " + apiKey);
    }
    return http.sendAsync(req.build(), HttpResponse.BodyHandlers.ofString());
  }

  /**
   * Whether a 404 is the web framework's answer for a path it does not serve ({@code {"detail":"Not
   * Found"}}), not vLLM's own NotFoundError (an adapter path it cannot find). vLLM registers the
   * load and unload routes only with VLLM_ALLOW_RUNTIME_LORA_UPDATING set; without it every load
   * answered this 404 and the version's reason read "vLLM refused to load … {"detail": "Not Found"}",
   * naming neither the setting nor the fix.
   */
  static boolean isMissingRoute(String body) {
    try {
      JsonNode n = MAPPER.readTree(body);
      return n != null && n.size() == 1 && "Not Found".equals(n.path("detail").asText(null));
    } catch (Exception e) {
      return false;
    }
  }

  /** vLLM's error object's message, else the first 300 characters of the body. */
  private static String message(String body) {
    try {
      JsonNode n = MAPPER.readTree(body);
      if (n.hasNonNull("message")) {
        return n.get("message").asText();
      }
      if (n.path("error").hasNonNull("message")) {
        return n.path("error").get("message").asText();
      }
    } catch (Exception ignored) {
      // not JSON: plain text below
    }
    return body.length() > 300 ? body.substring(0, 300) : body;
  }
}
