package io.otl.node;

import java.util.function.Supplier;

/**
 * What to do when a start fails because a port is taken: pekko's message names the address, but
 * not the setting that moves it, and 8080 in particular is often held by something else on a
 * developer's machine. Also a listen host that does not resolve, whose message names no key either.
 */
final class PortInUse {
  private PortInUse() {}

  /**
   * A listener's port is taken. The message names the one setting that moves that listener, with its value:
   * the hint named all three port variables, and which of them to change was left to the user (trial t141).
   */
  static final class Taken extends RuntimeException {
    Taken(String listener, Object port, String setting, Throwable cause) {
      super(listener + " port " + port + " is in use (another process listens on it): start this node with another "
          + setting + "; docs/configuration.md", cause);
    }
  }

  /**
   * Runs {@code bind}; when it fails on a taken port, a {@link Taken} naming {@code listener}, its {@code port}
   * and the {@code setting} that moves it (e.g. "OTL_HTTP_PORT (agentscope.training.http.port)").
   */
  static <T> T bind(String listener, Object port, String setting, Supplier<T> bind) {
    try {
      return bind.get();
    } catch (RuntimeException e) {
      if (portTaken(e)) throw new Taken(listener, port, setting, e);
      throw e;
    }
  }

  /** A hint for a start that failed without naming its setting: a taken port outside {@link #bind}, a host. */
  static String hint(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof Taken) return "";
      String m = String.valueOf(t.getMessage());
      // The config check refuses a host that does not resolve; one whose lookup outlasted that check's
      // bound fails here, where pekko's "Bind failed … UnresolvedAddressException" named no key.
      if (t instanceof java.nio.channels.UnresolvedAddressException || m.contains("UnresolvedAddressException")) {
        // Either listener's: the HTTP port's host or the cluster port's (OTL_HOSTNAME), named both.
        return " (the host to listen on does not resolve: agentscope.training.http.host, env OTL_HTTP_HOST, for the"
            + " HTTP port; pekko.remote.artery.canonical.hostname, env OTL_HOSTNAME, for the cluster port;"
            + " docs/configuration.md)";
      }
      if (isBindException(t)) {
        return " (another process listens on that port: start this node elsewhere with OTL_HTTP_PORT (HTTP, 8080),"
            + " OTL_CLUSTER_PORT (cluster, 25520) or OTL_SIMULATOR_PORT (the simulator, 8265); docs/configuration.md)";
      }
    }
    return "";
  }

  /** Only "in use": a BindException also says a host is not this machine's ("Cannot assign requested address"). */
  private static boolean portTaken(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (String.valueOf(t.getMessage()).contains("Address already in use")) return true;
    }
    return false;
  }

  private static boolean isBindException(Throwable t) {
    String m = String.valueOf(t.getMessage());
    return t instanceof java.net.BindException || m.contains("BindException") || m.contains("Address already in use");
  }
}
