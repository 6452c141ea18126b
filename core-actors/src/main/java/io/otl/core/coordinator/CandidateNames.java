package io.otl.core.coordinator;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * How a trained model gets a name nobody else holds. The coordinator names a candidate when the
 * job succeeds ({@code v<n>}, {@code proxy-<n>}) without knowing the versions an operator
 * registered by hand. When ModelVersion answers that the name is taken ({@link
 * CandidateSink.NameTaken}), the candidate is offered under the next name, and so on: the
 * sequence depends only on the first name, so a hand-over repeated after a crash walks the same
 * names and stops at the one that already holds this candidate (ModelVersion answers a repeated
 * registration of the same artifact and job as done). The name it ends on is recorded in
 * {@code CandidateHandedOver}.
 */
final class CandidateNames {
  private CandidateNames() {}

  /** Names tried for one hand-over before it fails (and is retried later with back-off). */
  static final int MAX_NAMES = 100;

  /**
   * The name after {@code name}: its trailing number plus one ({@code v1} → {@code v2},
   * {@code proxy-3} → {@code proxy-4}); a name without one gets {@code -2}.
   */
  static String next(String name) {
    int digits = name.length();
    while (digits > 0 && Character.isDigit(name.charAt(digits - 1))) {
      digits--;
    }
    if (digits == name.length() || name.length() - digits > 9) {
      return name + "-2";
    }
    return name.substring(0, digits) + (Long.parseLong(name.substring(digits)) + 1);
  }

  /**
   * Registers under {@code first}, or under the first following name that is not taken by
   * another version.
   *
   * @param register one registration under the given name (fails with NameTaken when taken)
   * @return the name ModelVersion has the candidate under
   */
  static CompletionStage<String> registerUnderFreeName(String first, Function<String, CompletionStage<Void>> register) {
    return attempt(first, 1, register);
  }

  private static CompletionStage<String> attempt(
      String name, int tried, Function<String, CompletionStage<Void>> register) {
    return PortCalls.call(() -> register.apply(name))
        .thenApply(ok -> CompletableFuture.completedFuture(name))
        .exceptionally(error -> {
          if (PortCalls.unwrap(error) instanceof CandidateSink.NameTaken && tried < MAX_NAMES) {
            return attempt(next(name), tried + 1, register).toCompletableFuture();
          }
          return CompletableFuture.failedFuture(error);
        })
        .thenCompose(r -> r);
  }
}
