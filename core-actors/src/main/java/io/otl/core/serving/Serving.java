package io.otl.core.serving;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * What ModelVersion needs to deploy versions: the backend, the base model registered as v0 (none:
 * an agent's first version is promoted directly, as before deployment existed), and the retry
 * policy of backend calls.
 *
 * @param maxAttempts deploy attempts before DEPLOY_FAILED (undeploys are retried without limit)
 */
public record Serving(
    ServingBackend backend,
    Optional<BaseModel> baseModel,
    Duration minBackoff,
    Duration maxBackoff,
    int maxAttempts) {

  public Serving {
    Objects.requireNonNull(backend, "backend");
    Objects.requireNonNull(baseModel, "baseModel");
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be >= 1");
    }
  }

  /** Endpoints as registered, no base model: the behaviour before deployment was modelled. */
  public static Serving registeredEndpoints() {
    return new Serving(StaticServing.INSTANCE, Optional.empty(), Duration.ofMillis(200),
        Duration.ofSeconds(30), 5);
  }

  public Serving withBaseModel(BaseModel base) {
    return new Serving(backend, Optional.of(base), minBackoff, maxBackoff, maxAttempts);
  }

  /** Backoff before attempt {@code attempt} (2 = the first retry): doubling, capped. */
  public Duration backoff(int attempt) {
    long factor = 1L << Math.min(20, Math.max(0, attempt - 2));
    Duration d = minBackoff.multipliedBy(factor);
    return d.compareTo(maxBackoff) > 0 ? maxBackoff : d;
  }
}
