package io.otl.http;

import io.otl.core.api.OperatorNames;
import java.util.Optional;
import java.util.function.Function;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * Who sends an operator's command (promote, rollback, pause, resume, register, trigger, cancel,
 * policy), as the journal records it (docs/operations.md "Who did it"):
 * <ul>
 *   <li>{@code token:<name>} when the request carries a named operator token ({@code
 *       auth.operators}): an identity the node checked. An {@code X-Actor} beside it must name that
 *       same operator (400 otherwise): a caller holding alice's token may not write as bob.
 *   <li>{@code http:<name>} with the shared token ({@code auth.token}) or none, and {@code X-Actor:
 *       <name>}: what the caller (or an authenticating proxy in front of the node) states.
 *   <li>{@code http} without either.
 * </ul>
 */
final class Actors {
  static final String HEADER = "X-Actor";

  private Actors() {}

  /**
   * Runs {@code inner} with the request's actor; an invalid {@code X-Actor} is a 400 that names the
   * header and never repeats its value (it may hold anything), and the command is not sent.
   */
  static Route actor(Function<String, Route> inner) {
    return Directives.extractRequest(request -> {
      String actor;
      try {
        actor = of(request);
      } catch (BadRequest e) {
        return Directives.complete(ApiErrors.toResponse(e));
      }
      return inner.apply(actor);
    });
  }

  static String of(HttpRequest request) {
    String name = null;
    for (HttpHeader h : request.getHeaders()) {
      if (!h.is("x-actor")) continue;
      if (name != null && !name.equals(h.value())) {
        throw BadRequest.invalid(HEADER + " is sent more than once with different values; send it once");
      }
      name = h.value();
    }
    if (name != null) {
      String problem = OperatorNames.problem(HEADER, name);
      if (problem != null) throw BadRequest.invalid(problem);
    }
    Optional<String> operator = request.getAttribute(Auth.OPERATOR);
    if (operator.isPresent()) {
      if (name != null && !name.equals(operator.get())) {
        throw BadRequest.invalid(HEADER + " names another operator than the bearer token's; leave " + HEADER
            + " out (the token names its operator) or send the token's own name");
      }
      return "token:" + operator.get();
    }
    return name == null ? "http" : "http:" + name;
  }
}
