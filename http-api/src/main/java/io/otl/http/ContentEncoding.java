package io.otl.http;

import java.util.Locale;
import org.apache.pekko.http.javadsl.model.HttpRequest;

/** The body's Content-Encoding, as the API's bodies and OTLP's compare it. */
public final class ContentEncoding {
  private ContentEncoding() {}

  /**
   * Trimmed and lower-cased ({@code identity} when the header is absent). Lower-cased in the root
   * locale: in a Turkish default locale {@code GZIP} would become {@code gzıp} (dotless i) and a
   * gzip body would be refused.
   */
  public static String of(HttpRequest request) {
    return request.getHeader("Content-Encoding").map(h -> h.value().trim().toLowerCase(Locale.ROOT))
        .orElse("identity");
  }
}
