package io.otl.http;

import static org.apache.pekko.http.javadsl.server.Directives.concat;
import static org.apache.pekko.http.javadsl.server.Directives.extractUnmatchedPath;
import static org.apache.pekko.http.javadsl.server.Directives.get;
import static org.apache.pekko.http.javadsl.server.Directives.getFromResource;
import static org.apache.pekko.http.javadsl.server.Directives.getFromResourceDirectory;
import static org.apache.pekko.http.javadsl.server.Directives.pathEndOrSingleSlash;
import static org.apache.pekko.http.javadsl.server.Directives.pathPrefix;
import static org.apache.pekko.http.javadsl.server.Directives.pathSingleSlash;
import static org.apache.pekko.http.javadsl.server.Directives.redirect;
import static org.apache.pekko.http.javadsl.server.Directives.reject;
import static org.apache.pekko.http.javadsl.server.Directives.respondWithHeaders;

import java.util.List;
import java.util.regex.Pattern;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.Uri;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.Route;

/**
 * The web console: static files from the jar ({@code console/**} on the class path) under
 * {@code /console}. It is mounted outside {@code /v1} and outside auth: the files hold no data;
 * the console reads the public {@code /v1} API from the browser, with the bearer token the user
 * types in. {@code GET /console} and {@code /console/} answer {@code index.html}; the other files
 * get their content type from the extension. Unknown files fall through to the JSON 404. {@code GET /}
 * (and HEAD) redirects to {@code /console} (302); another method there is a 405 naming GET, HEAD.
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

  /**
   * The paths of the console's files, as sent (still percent-encoded): segments of plain file-name
   * characters, none starting with a dot. Anything else is no file of the console and falls through
   * to the 404 before pekko-http's resource directive sees it: given {@code /console/..%2F<text>},
   * that directive logged a WARN line per request holding the decoded path, so a client could write
   * whatever it liked (an e-mail address, a phone number) into the log, as fast as it could send.
   */
  private static final Pattern FILE_PATH = Pattern.compile("(?:/[A-Za-z0-9_-][A-Za-z0-9._-]*+)++");

  private ConsoleRoutes() {}

  /** Where {@code GET /} sends a browser: the console, the node's one page for people. */
  static final String ROOT_TARGET = "/console";

  public static Route route() {
    return concat(
        // A user who opens http://host:8080/ got the JSON 404. The redirect holds no data, so it is
        // outside auth like the console; 302 (not 301/308) so no browser keeps it should / ever serve more.
        pathSingleSlash(() -> get(() -> respondWithHeaders(HEADERS, () ->
            redirect(Uri.create(ROOT_TARGET), StatusCodes.FOUND)))),
        pathPrefix("console", () -> get(() -> respondWithHeaders(HEADERS, () -> concat(
            pathEndOrSingleSlash(() -> getFromResource(RESOURCE_DIR + "/index.html")),
            extractUnmatchedPath(file -> FILE_PATH.matcher(file).matches()
                ? getFromResourceDirectory(RESOURCE_DIR) : reject()))))));
  }
}
