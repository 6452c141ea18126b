package io.otl.http;

import io.otl.core.session.Desensitizer;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpRequest;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * Who sends an operator's command (promote, rollback, pause, resume, register, trigger, cancel,
 * policy), as the journal records it: {@code http}, or {@code http:<name>} with the optional
 * {@code X-Actor: <name>} header. The node knows one operator token ({@code auth.token}), so the
 * token cannot tell two operators apart; the header names the person or tool, as the caller (or an
 * authenticating proxy in front of the node) states it (docs/operations.md "Who did it").
 */
final class Actors {
  static final String HEADER = "X-Actor";
  /** The id charset without '@' (no e-mail addresses into the journal), at most 64 characters. */
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._:-]{1,64}");

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
    if (name == null) return "http";
    if (!NAME.matcher(name).matches()) {
      throw BadRequest.invalid(HEADER + " must be 1-64 characters of A-Z a-z 0-9 . _ : - (a user or tool name)");
    }
    try {
      // A phone or id number as a name must not reach the journal (design §3.1).
      Desensitizer.refusePersonalData(HEADER, name, "send a user or tool name");
    } catch (IllegalArgumentException e) {
      throw BadRequest.invalid(e.getMessage());
    }
    return "http:" + name;
  }
}
