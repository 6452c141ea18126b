package io.otl.core.serving;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * What ModelVersion deploys versions with: the backend, the base model registered as v0 (none:
 * an agent's first version is promoted directly, as before deployment existed), the retry policy
 * of backend calls, and how a version registered by hand is served at its own endpoint.
 *
 * @param maxAttempts deploy attempts before DEPLOY_FAILED (undeploys are retried without limit)
 * @param ownEndpoints a version registered by hand that the backend would not load (see {@link
 *     #servesAtOwnEndpoint}) is served by this one, at the endpoint it was registered with: the
 *     {@code static} backend with {@code serving.static.served-model}
 */
public record Serving(
    ServingBackend backend,
    Optional<BaseModel> baseModel,
    Duration minBackoff,
    Duration maxBackoff,
    int maxAttempts,
    StaticServing ownEndpoints) {

  public Serving {
    Objects.requireNonNull(backend, "backend");
    Objects.requireNonNull(baseModel, "baseModel");
    Objects.requireNonNull(ownEndpoints, "ownEndpoints");
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be >= 1");
    }
  }

  /**
   * Versions registered by hand at their own endpoint go upstream under the agent's own model name;
   * under the static backend, as that backend names them (it serves every version at its own endpoint).
   */
  public Serving(ServingBackend backend, Optional<BaseModel> baseModel, Duration minBackoff, Duration maxBackoff,
      int maxAttempts) {
    this(backend, baseModel, minBackoff, maxBackoff, maxAttempts,
        backend instanceof StaticServing s ? s : StaticServing.INSTANCE);
  }

  /**
   * Whether a version is served at the endpoint it was registered with, without a load call, although
   * the backend loads versions into a server: a version registered by hand whose artifact is not a
   * local adapter directory ({@code file:} URI or absolute path). The endpoint a user gives is where
   * the version is served (a Hugging Face id or a model another server already serves cannot be
   * loaded from this machine); a local adapter directory is what a LoRA server loads, so it is loaded
   * as a job's checkpoint is, unless the registration names its {@code servedModel}: a name is what
   * a server that already serves the version answers to. Versions of training jobs always go through
   * the backend.
   */
  public boolean servesAtOwnEndpoint(boolean manual, String artifact, String servedModel) {
    return manual && backend.callsServer() && (servedModel != null || !isLocalPath(artifact));
  }

  static boolean isLocalPath(String artifact) {
    return artifact != null && (artifact.startsWith("file:") || artifact.startsWith("/"));
  }

  /** Endpoints as registered, no base model: the behaviour before deployment was modelled. */
  public static Serving registeredEndpoints() {
    return new Serving(StaticServing.INSTANCE, Optional.empty(), Duration.ofMillis(200),
        Duration.ofSeconds(30), 5);
  }

  public Serving withBaseModel(BaseModel base) {
    return new Serving(backend, Optional.of(base), minBackoff, maxBackoff, maxAttempts, ownEndpoints);
  }

  /** Backoff before attempt {@code attempt} (2 = the first retry): doubling, capped. */
  public Duration backoff(int attempt) {
    long factor = 1L << Math.min(20, Math.max(0, attempt - 2));
    Duration d = minBackoff.multipliedBy(factor);
    return d.compareTo(maxBackoff) > 0 ? maxBackoff : d;
  }
}
