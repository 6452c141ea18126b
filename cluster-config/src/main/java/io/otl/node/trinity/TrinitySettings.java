package io.otl.node.trinity;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.net.URI;
import java.util.Optional;

/**
 * The Trinity part of {@code agentscope.training.training-runner} (DESIGN §8).
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

  private static final Config DEFAULTS =
      ConfigFactory.parseString(
          """
          backend = ray-jobs
          trinity-endpoint = "http://localhost:8265"
          trinity {
            request-timeout = 30s
            entrypoint-num-gpus = 0
            node-num = 1
            gpu-per-node = 1
          }
          """);

  public TrinitySettings {
    if (!backend.equals(RayJobsBackend.TYPE) && !backend.equals(TrinityProxyBackend.TYPE)) {
      throw new IllegalArgumentException(
          PATH + ".backend must be ray-jobs or trinity-proxy, was '" + backend + "'");
    }
  }

  /** Reads {@value #PATH} of the given root config; absent keys take the defaults above. */
  public static TrinitySettings fromConfig(Config root) {
    Config c = root.hasPath(PATH) ? root.getConfig(PATH).withFallback(DEFAULTS) : DEFAULTS;
    String endpointText = c.getString("trinity-endpoint");
    URI uri;
    try {
      uri = URI.create(endpointText);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(PATH + ".trinity-endpoint is not a URL: '" + endpointText + "'", e);
    }
    Optional<String> token =
        c.hasPath("trinity.auth-token") ? Optional.of(c.getString("trinity.auth-token")) : Optional.empty();
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
