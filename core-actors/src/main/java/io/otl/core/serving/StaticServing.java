package io.otl.core.serving;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The {@code static} backend: a version is served at the endpoint given at registration, under a
 * fixed model name, or (none configured) under the model name the agent sent. Nothing is called, so
 * nothing can fail.
 */
public final class StaticServing implements ServingBackend {

  /** No served model name: the agent's own model name goes upstream. */
  public static final StaticServing INSTANCE = new StaticServing(null);

  private final String servedModel;

  /** @param servedModel the name sent upstream for every version; null = the agent's own */
  public StaticServing(String servedModel) {
    this.servedModel = servedModel == null || servedModel.isBlank() ? null : servedModel;
  }

  @Override
  public String name() {
    return "static";
  }

  @Override
  public ServingTarget target(String agentId, String version, String artifact, String registeredEndpoint) {
    return new ServingTarget(registeredEndpoint, servedModel);
  }

  @Override
  public boolean callsServer() {
    return false;
  }

  @Override
  public CompletionStage<Void> deploy(ServingTarget target, String artifact) {
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public CompletionStage<Void> undeploy(ServingTarget target) {
    return CompletableFuture.completedFuture(null);
  }
}
