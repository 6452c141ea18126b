package io.otl.node.config;

import java.util.List;

/**
 * The configuration cannot be used. {@link #getMessage()} lists every error found, one per line,
 * each naming the full key, the value given (masked for secrets) and what is allowed, then the
 * unknown keys found beside them: the node does not start, so it never logs them, and a typo is
 * often why a value is missing (design §8: unknown keys are reported by name).
 */
public final class ConfigValidationException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final List<String> errors;
  private final List<String> unknownKeys;

  public ConfigValidationException(List<String> errors) {
    this(errors, List.of());
  }

  /**
   * @param unknownKeys one line per unknown key ("…: unknown key, ignored"), listed after the errors
   */
  public ConfigValidationException(List<String> errors, List<String> unknownKeys) {
    super(format(errors, unknownKeys));
    this.errors = List.copyOf(errors);
    this.unknownKeys = List.copyOf(unknownKeys);
  }

  /** The unknown keys listed after the errors. */
  public List<String> unknownKeys() {
    return unknownKeys;
  }

  /** The errors, one sentence each. */
  public List<String> errors() {
    return errors;
  }

  private static String format(List<String> errors, List<String> unknownKeys) {
    StringBuilder sb = new StringBuilder("Invalid configuration (")
        .append(errors.size()).append(errors.size() == 1 ? " error):" : " errors):");
    for (String e : errors) {
      sb.append(System.lineSeparator()).append("  - ").append(e);
    }
    if (!unknownKeys.isEmpty()) {
      sb.append(System.lineSeparator()).append("Also found (not errors):");
      for (String u : unknownKeys) {
        sb.append(System.lineSeparator()).append("  - ").append(u);
      }
    }
    return sb.toString();
  }
}
