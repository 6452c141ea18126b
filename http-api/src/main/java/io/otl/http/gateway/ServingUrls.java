package io.otl.http.gateway;

import java.net.URI;
import java.net.URISyntaxException;

/**
 * Which serving endpoints the gateway can call: one rule for the registration of a version (which
 * refuses the others with 400) and for the call itself (which answers a stored one 502), so that a
 * version registered is a version the gateway calls.
 */
public final class ServingUrls {
  private ServingUrls() {}

  /**
   * An http(s) URL with a host and, if given, a port from 1 to 65535, that pekko-http's client also
   * takes: it is stricter than {@link URI} (a port past 65535 was a 500 on every call of the version),
   * and "x" or "my-server" used to be stored, every call then failing long after the 201.
   */
  public static boolean callable(String endpoint) {
    if (endpoint == null) return false;
    try {
      URI uri = new URI(endpoint);
      boolean web = "http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme());
      boolean port = uri.getPort() == -1 || uri.getPort() >= 1 && uri.getPort() <= 65535;
      if (!web || uri.getHost() == null || !port) return false;
      org.apache.pekko.http.javadsl.model.Uri.create(endpoint);
      return true;
    } catch (URISyntaxException | RuntimeException e) {
      return false;
    }
  }

  /**
   * Whether {@code url} plainly reaches the node's own HTTP listener ({@code http.host}, bound to
   * {@code listenPort}): its port (80 or 443 when it gives none) is the listener's, and its host is the
   * configured one as written, or an address the listener takes (a loopback one or {@code localhost} for a
   * loopback listener; any address of this machine for one on {@code 0.0.0.0}/{@code ::}). Names are not
   * looked up (no DNS on a registration): another name of this machine is caught when it is called
   * ({@link GatewayHop}).
   */
  public static boolean reachesListener(String url, String listenHost, int listenPort) {
    if (url == null || listenPort <= 0) return false;
    URI uri;
    try {
      uri = new URI(url.trim());
    } catch (URISyntaxException e) {
      return false;
    }
    if (uri.getHost() == null) return false;
    int port = uri.getPort() != -1 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    if (port != listenPort) return false;
    String host = bare(uri.getHost());
    String listen = bare(listenHost == null ? "" : listenHost);
    if (host.equalsIgnoreCase(listen)) return true;
    java.net.InetAddress target = addressOf(host);
    java.net.InetAddress listener = addressOf(listen);
    if (target == null || listener == null) return false;
    if (listener.isAnyLocalAddress()) return isThisMachine(target);
    // A connection to 0.0.0.0 (or ::) reaches this machine's loopback listener.
    if (listener.isLoopbackAddress()) return target.isLoopbackAddress() || target.isAnyLocalAddress();
    return target.equals(listener);
  }

  private static String bare(String host) {
    String h = host.trim();
    return h.startsWith("[") && h.endsWith("]") ? h.substring(1, h.length() - 1) : h;
  }

  /** The address of an IP literal or of {@code localhost}; null for any other name (never looked up). */
  private static java.net.InetAddress addressOf(String host) {
    String h = host.toLowerCase(java.util.Locale.ROOT);
    try {
      if (h.equals("localhost") || h.endsWith(".localhost")) return java.net.InetAddress.getLoopbackAddress();
      boolean literal = h.indexOf(':') >= 0 || !h.isEmpty() && h.chars().allMatch(c -> c == '.' || c >= '0' && c <= '9');
      return literal ? java.net.InetAddress.getByName(h) : null;
    } catch (java.io.IOException e) {
      return null;
    }
  }

  private static boolean isThisMachine(java.net.InetAddress a) {
    if (a.isLoopbackAddress() || a.isAnyLocalAddress()) return true;
    try {
      return java.net.NetworkInterface.getByInetAddress(a) != null;
    } catch (java.io.IOException e) {
      return false;
    }
  }

  /**
   * True when the URL carries a user-info part ({@code http://user:key@host}). Neither the gateway's
   * client nor the vLLM client sends it, yet a URL is journaled, logged and answered by GET
   * /v1/models/{agentId} and …/route as given: the key would travel everywhere but to the server.
   */
  public static boolean hasCredentials(String url) {
    if (url == null) return false;
    try {
      return new URI(url.trim()).getRawUserInfo() != null;
    } catch (URISyntaxException e) {
      int at = url.indexOf('@');
      int scheme = url.indexOf("://");
      int path = scheme < 0 ? -1 : url.indexOf('/', scheme + 3);
      return scheme >= 0 && at > scheme && (path < 0 || at < path);
    }
  }

  /**
   * True when the URL has a query or a fragment ({@code http://vllm/v1?api_key=…}). The gateway and the
   * vLLM client append their paths to the URL as a string, so a query swallowed them: every call of the
   * version went to {@code /v1?api_key=…/chat/completions} and got the server's 404, while the query (a
   * key, typically) was journaled and answered by GET /v1/models and …/route as given.
   */
  public static boolean hasQueryOrFragment(String url) {
    if (url == null) return false;
    try {
      URI uri = new URI(url.trim());
      return uri.getRawQuery() != null || uri.getRawFragment() != null;
    } catch (URISyntaxException e) {
      return url.indexOf('?') >= 0 || url.indexOf('#') >= 0;
    }
  }
}
