package io.otl.core.serving;

import java.util.concurrent.CompletionStage;

/**
 * The port to whatever serves a model version (design §3.3 "Deployment"). ModelVersion records
 * its intent as an event before every {@link #deploy} / {@link #undeploy} and calls again after a
 * crash, so both must be idempotent: deploying what is already loaded under the same name, or
 * undeploying what is already gone, completes normally.
 *
 * <p>Implementations live outside core-actors (no HTTP here): {@code static} and {@code vllm-lora}
 * in cluster-config.
 */
public interface ServingBackend {

  /** The backend's configuration name, recorded in the deployment events. */
  String name();

  /**
   * Where the version will be served, without any call: pure, so the entity can record it in the
   * intent before the call.
   *
   * @param registeredEndpoint the endpoint given at registration (the job's output or by hand)
   */
  ServingTarget target(String agentId, String version, String artifact, String registeredEndpoint);

  /**
   * True when deploying calls a server; false when the target is served as soon as it is known
   * (a {@code static} endpoint), and the entity confirms the deployment in the same write.
   */
  boolean callsServer();

  /**
   * Loads the version. Fails with {@link ServingException} ({@code retryable} for a server that
   * is down or busy, not for a refusal such as a missing adapter path).
   */
  CompletionStage<Void> deploy(ServingTarget target, String artifact);

  /** Unloads the version; an unknown name is already unloaded. */
  CompletionStage<Void> undeploy(ServingTarget target);
}
