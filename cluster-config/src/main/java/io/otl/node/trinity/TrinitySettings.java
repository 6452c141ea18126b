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

  /**
   * These settings with the simulator's bound address for an endpoint on port 0. {@code simulator.port = 0}
   * (OTL_SIMULATOR_PORT=0: "0 picks a free one") made the default endpoint {@code http://127.0.0.1:0},
   * which no client can call: the simulator and the v0 model face were on the picked port while every
   * job's submission went to port 0 (trial t59). An endpoint on any other port is kept as configured.
   */
  public TrinitySettings onPickedPort(String simulatorBaseUrl) {
    if (endpoint.baseUri().getPort() != 0) return this;
    TrinityEndpoint picked = new TrinityEndpoint(URI.create(simulatorBaseUrl), endpoint.requestTimeout(),
        endpoint.bearerToken());
    return new TrinitySettings(backend, picked, new RayJobsSettings(picked, rayJobs.entrypointNumGpus(),
        rayJobs.nodeNum(), rayJobs.gpuPerNode()));
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
