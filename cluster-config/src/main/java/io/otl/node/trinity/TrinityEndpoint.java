package io.otl.node.trinity;

import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Where and how to reach a Trinity-side HTTP API (the Ray head's dashboard, or the Trinity proxy).
 *
 * @param baseUri e.g. {@code http://ray-head:8265} or {@code http://trinity:8010}; a trailing slash
 *     is ignored
 * @param requestTimeout bound on one request, including reading the response body
 * @param bearerToken optional; sent as {@code Authorization: Bearer …} and never logged
 */
public record TrinityEndpoint(URI baseUri, Duration requestTimeout, Optional<String> bearerToken) {

  public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

  public TrinityEndpoint {
    Objects.requireNonNull(baseUri, "baseUri");
    String scheme = baseUri.getScheme();
    if (!"http".equals(scheme) && !"https".equals(scheme)) {
      throw new IllegalArgumentException("endpoint must be an http(s) URL, was '" + baseUri + "'");
    }
    String s = baseUri.toString();
    if (s.endsWith("/")) {
      baseUri = URI.create(s.substring(0, s.length() - 1));
    }
    requestTimeout = requestTimeout == null ? DEFAULT_TIMEOUT : requestTimeout;
    if (requestTimeout.isNegative() || requestTimeout.isZero()) {
      throw new IllegalArgumentException("request timeout must be positive, was " + requestTimeout);
    }
    bearerToken = bearerToken == null ? Optional.empty() : bearerToken.filter(t -> !t.isBlank());
  }

  public static TrinityEndpoint of(String baseUri) {
    return new TrinityEndpoint(URI.create(baseUri), DEFAULT_TIMEOUT, Optional.empty());
  }

  public TrinityEndpoint withRequestTimeout(Duration timeout) {
    return new TrinityEndpoint(baseUri, timeout, bearerToken);
  }

  public TrinityEndpoint withBearerToken(String token) {
    return new TrinityEndpoint(baseUri, requestTimeout, Optional.ofNullable(token));
  }

  /** Absolute URL of an API path such as {@code /api/jobs/}. */
  public String url(String path) {
    return baseUri + path;
  }

  /**
   * The endpoint as messages, logs and job errors (journaled) show it: scheme, host, port and path. A URL's
   * user info or query may hold a credential (http://user:secret@ray-head:8265), which must not reach them.
   */
  public String shown() {
    String authority = baseUri.getRawAuthority() == null ? "" : baseUri.getRawAuthority();
    return baseUri.getScheme() + "://" + authority.substring(authority.lastIndexOf('@') + 1)
        + (baseUri.getRawPath() == null ? "" : baseUri.getRawPath());
  }

  /** Redacts the token and any credential in the URL: records print every component, and settings end up in logs. */
  @Override
  public String toString() {
    return "TrinityEndpoint[baseUri="
        + shown()
        + ", requestTimeout="
        + requestTimeout
        + ", bearerToken="
        + (bearerToken.isPresent() ? "<redacted>" : "<none>")
        + "]";
  }
}
