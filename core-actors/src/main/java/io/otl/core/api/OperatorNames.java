package io.otl.core.api;

import io.otl.core.session.Desensitizer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The names of who asks for an operator command (promote, rollback, pause, resume, trigger, cancel,
 * policy), as the journal records them: {@code http:<name>} (a name an HTTP caller states), {@code
 * token:<name>} (a named operator token the node checked), {@code java:<name>} (the embedded API).
 * One rule for all three, so an audit reads one kind of name.
 */
public final class OperatorNames {
  /** The id charset without '@' (no e-mail addresses into the journal), at most 64 characters. */
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._:-]{1,64}");

  /** What a name is, for messages. */
  public static final String RULE = "1-64 characters of A-Z a-z 0-9 . _ : - (a user or tool name)";

  private OperatorNames() {}

  /**
   * Null when {@code name} may be recorded, else the problem, naming {@code field} and never the value
   * (it may hold anything): a phone or id number as a name must not reach the journal (design §3.1).
   */
  public static String problem(String field, String name) {
    if (name == null || !NAME.matcher(name).matches()) return field + " must be " + RULE;
    try {
      Desensitizer.refusePersonalData(field, name, "send a user or tool name");
    } catch (IllegalArgumentException e) {
      return e.getMessage();
    }
    return null;
  }

  /**
   * Runs an embedded API command as {@code java:<name>} (null gives {@code java}); a name that may not
   * be recorded fails the stage with an {@link IllegalArgumentException} naming {@code actor}, and
   * nothing is sent.
   */
  static <T> CompletionStage<T> asJava(String name, Function<String, CompletionStage<T>> command) {
    if (name == null) return command.apply("java");
    String problem = problem("actor", name);
    if (problem != null) return CompletableFuture.failedFuture(new IllegalArgumentException(problem));
    return command.apply("java:" + name);
  }
}
