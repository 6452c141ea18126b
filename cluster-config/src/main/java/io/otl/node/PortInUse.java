package io.otl.node;

/**
 * What to do when a start fails because a port is taken: pekko's message names the address, but
 * not the setting that moves it, and 8080 in particular is often held by something else on a
 * developer's machine. Also a listen host that does not resolve, whose message names no key either.
 */
final class PortInUse {
  private PortInUse() {}

  /** A hint naming the port variables when {@code failure} is a taken port, else "". */
  static String hint(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      String m = String.valueOf(t.getMessage());
      // The config check refuses a host that does not resolve; one whose lookup outlasted that check's
      // bound fails here, where pekko's "Bind failed … UnresolvedAddressException" named no key.
      if (t instanceof java.nio.channels.UnresolvedAddressException || m.contains("UnresolvedAddressException")) {
        // Either listener's: the HTTP port's host or the cluster port's (OTL_HOSTNAME), named both.
        return " (the host to listen on does not resolve: agentscope.training.http.host, env OTL_HTTP_HOST, for the"
            + " HTTP port; pekko.remote.artery.canonical.hostname, env OTL_HOSTNAME, for the cluster port;"
            + " docs/configuration.md)";
      }
      if (t instanceof java.net.BindException || m.contains("BindException") || m.contains("Address already in use")) {
        return " (another process listens on that port: start this node elsewhere with OTL_HTTP_PORT (HTTP, 8080),"
            + " OTL_CLUSTER_PORT (cluster, 25520) or OTL_SIMULATOR_PORT (the simulator, 8265); docs/configuration.md)";
      }
    }
    return "";
  }
}
