package io.otl.core.serving;

/**
 * Where a version is served: the OpenAI base URL the gateway calls, and the model name it sends
 * there in place of the agent's logical model.
 */
public record ServingTarget(String endpoint, String servedModel) {}
