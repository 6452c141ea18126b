package io.otl.http;

import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.getFromResource;
import static org.apache.pekko.http.javadsl.server.Directives.getFromResourceDirectory;
import static org.apache.pekko.http.javadsl.server.Directives.pathEndOrSingleSlash;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.respondWithHeaders;

import java.util.List;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The web console: static files from the jar ({@code console/**} on the class path) under
 * {@code /console}. It is mounted outside {@code /v1} and outside auth: the files hold no data;
 * the console reads the public {@code /v1} API from the browser, with the bearer token the user
 * types in. {@code GET /console} and {@code /console/} answer {@code index.html}; the other files
 * get their content type from the extension. Unknown files fall through to the JSON 404.
 */
public final class ConsoleRoutes {
  /** Class-path folder of the console's files. */
  static final String RESOURCE_DIR = "console";

  /**
   * Same-origin only: scripts, styles and API calls from this node, no inline script, nothing
   * framed. The console draws its charts as SVG through the DOM, which this policy allows.
   */
  static final String CONTENT_SECURITY_POLICY = "default-src 'self'; script-src 'self'; style-src 'self'; "
      + "img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

  private static final List<HttpHeader> HEADERS = List.of(
      RawHeader.create("Cache-Control", "no-cache"),
      RawHeader.create("X-Content-Type-Options", "nosniff"),
      RawHeader.create("Referrer-Policy", "no-referrer"),
      RawHeader.create("Content-Security-Policy", CONTENT_SECURITY_POLICY));

  private ConsoleRoutes() {}

  public static Route route() {
    return pathPrefix("console", () -> get(() -> respondWithHeaders(HEADERS, () -> concat(
        pathEndOrSingleSlash(() -> getFromResource(RESOURCE_DIR + "/index.html")),
        getFromResourceDirectory(RESOURCE_DIR)))));
  }
}
