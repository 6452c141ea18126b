package io.otl.node.config;

import java.util.List;

/**
 * The configuration cannot be used. {@link #getMessage()} lists every error found, one per line,
 * each naming the full key, the value given (masked for secrets) and what is allowed.
 */
public final class ConfigValidationException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  private final List<String> errors;

  public ConfigValidationException(List<String> errors) {
    super(format(errors));
    this.errors = List.copyOf(errors);
  }

  /** The errors, one sentence each. */
  public List<String> errors() {
    return errors;
  }

  private static String format(List<String> errors) {
    StringBuilder sb = new StringBuilder("Invalid configuration (")
        .append(errors.size()).append(errors.size() == 1 ? " error):" : " errors):");
    for (String e : errors) {
      sb.append(System.lineSeparator()).append("  - ").append(e);
    }
    return sb.toString();
  }
}
