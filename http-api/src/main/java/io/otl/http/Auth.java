package io.otl.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Optional;
import java.util.function.Supplier;
import org.apache.pekko.http.javadsl.model.HttpMethods;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.HttpChallenge;
import org.apache.pekko.http.javadsl.model.headers.WWWAuthenticate;
import org.apache.pekko.http.javadsl.server.Directives;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * Bearer-token protection (DESIGN §7.1): writes need the token when one is configured; reads too
 * when {@code protectReads}. Tokens are compared in constant time and never logged.
 */
public final class Auth {
  private final byte[] token;
  private final boolean protectReads;

  /** @param token empty: no protection */
  public Auth(Optional<String> token, boolean protectReads) {
    this.token = token.filter(t -> !t.isEmpty()).map(t -> t.getBytes(StandardCharsets.UTF_8)).orElse(null);
    this.protectReads = protectReads;
  }

  public boolean enabled() {
    return token != null;
  }

  public Route protect(Supplier<Route> inner) {
    if (token == null) return inner.get();
    return Directives.extractRequest(request -> {
      boolean read = request.method().equals(HttpMethods.GET) || request.method().equals(HttpMethods.HEAD);
      if (read && !protectReads) return inner.get();
      Optional<String> header = request.getHeader("Authorization").map(h -> h.value());
      if (header.isPresent() && header.get().startsWith("Bearer ")
          && MessageDigest.isEqual(token, header.get().substring(7).trim().getBytes(StandardCharsets.UTF_8))) {
        return inner.get();
      }
      return Directives.complete(Json.error(StatusCodes.UNAUTHORIZED, "unauthorized",
              header.isPresent() ? "the bearer token is wrong" : "an Authorization: Bearer <token> header is required")
          .addHeader(WWWAuthenticate.create(HttpChallenge.create("Bearer", "otl"))));
    });
  }
}
