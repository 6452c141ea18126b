package io.otl.core.model;

import java.util.Optional;

/**
 * Checks the inference-gateway figures of one outcome (the guardrails' input) before anything is
 * recorded: a bad count is refused with a clear message instead of skewing a rollout's figures.
 */
final class GuardrailInput {

  private GuardrailInput() {}

  static Optional<String> validate(Integer modelCalls, Integer upstreamErrors, Long tokens) {
    if (modelCalls != null && modelCalls < 0) {
      return Optional.of("modelCalls: must be >= 0 or absent, was " + modelCalls);
    }
    if (upstreamErrors != null
        && (upstreamErrors < 0 || modelCalls == null || upstreamErrors > modelCalls)) {
      return Optional.of("upstreamErrors: must be between 0 and modelCalls (" + modelCalls
          + "), was " + upstreamErrors);
    }
    if (tokens != null && tokens < 0) {
      return Optional.of("tokens: must be >= 0 or absent, was " + tokens);
    }
    return Optional.empty();
  }
}
