package io.otl.node.trinity;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.net.URI;
import java.util.Optional;

/**
 * The Trinity part of {@code agentscope.training.training-runner} (design §8).
 *
 * <pre>
 * agentscope.training.training-runner {
 *   backend = ray-jobs            # or trinity-proxy
 *   trinity-endpoint = "http://localhost:8265"   # Ray head for ray-jobs, Trinity proxy (8010) for trinity-proxy
 *   trinity {                     # additions of this project, all optional
 *     request-timeout = 30s
 *     auth-token = ${?OTL_TRINITY_TOKEN}   # bearer token, never logged
 *     entrypoint-num-gpus = 0
 *     node-num = 1
 *     gpu-per-node = 1
 *   }
 * }
 * </pre>
 */
public record TrinitySettings(String backend, TrinityEndpoint endpoint, RayJobsSettings rayJobs) {

  public static final String PATH = "agentscope.training.training-runner";

  public TrinitySettings {
    if (!backend.equals(RayJobsBackend.TYPE) && !backend.equals(TrinityProxyBackend.TYPE)) {
      throw new IllegalArgumentException(
          PATH + ".backend must be ray-jobs or trinity-proxy, was '" + backend + "'");
    }
  }

  /** Reads {@value #PATH} of the given root config; absent keys take the reference.conf defaults. */
  public static TrinitySettings fromConfig(Config root) {
    Config c = root.withFallback(ConfigFactory.defaultReference()).getConfig(PATH);
    String endpointText = c.getString("trinity-endpoint");
    URI uri;
    try {
      uri = URI.create(endpointText);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(PATH + ".trinity-endpoint is not a URL: '" + endpointText + "'", e);
    }
    Optional<String> token = Optional.of(c.getString("trinity.auth-token")).filter(t -> !t.isEmpty());
    TrinityEndpoint endpoint = new TrinityEndpoint(uri, c.getDuration("trinity.request-timeout"), token);
    RayJobsSettings ray =
        new RayJobsSettings(
            endpoint,
            c.getInt("trinity.entrypoint-num-gpus"),
            c.getInt("trinity.node-num"),
            c.getInt("trinity.gpu-per-node"));
    return new TrinitySettings(c.getString("backend"), endpoint, ray);
  }
}
