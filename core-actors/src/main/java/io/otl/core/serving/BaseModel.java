package io.otl.core.serving;

/**
 * The agent's configured base model (the AgentScope {@code model} section), registered as version
 * {@code v0}. Holds no key: upstream keys stay in the node's configuration.
 *
 * @param endpoint the OpenAI base URL serving it
 * @param model the model name sent upstream
 */
public record BaseModel(String provider, String endpoint, String model) {
  public static final String VERSION = "v0";
}
