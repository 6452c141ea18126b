package io.otl.node;

import java.util.function.Supplier;

/**
 * What to do when a listener cannot bind: pekko's message names the address, but not the setting that
 * moves it. Every listener binds through {@link #bind}, which sorts its failure into one of {@link Cause}
 * and, for all but {@link Cause#OTHER}, fails the start with a {@link Refused} naming the one setting to
 * change with its value: the port's when the port is taken (8080 is often held by something else on a
 * developer's machine), the host's when the host is not an address of this machine or does not resolve.
 */
public final class PortInUse {
  private PortInUse() {}

  /**
   * A listener of this node: its name as the message starts it ("the HTTP API's"), its port and host, and
   * the settings that set them (e.g. "OTL_HTTP_PORT (agentscope.training.http.port)").
   */
  record Listener(String name, Object port, String portSetting, Object host, String hostSetting) {}

  /** Why a bind failed (also the {@code simulator} command's, which names its own options). */
  public enum Cause {
    /** "Address already in use": another process listens on the port. */
    TAKEN,
    /** "Cannot assign requested address": the host is no address of this machine (a typo, another machine's IP). */
    NOT_THIS_MACHINE,
    /** The host name does not resolve (a lookup that outlasted the config check's bound). */
    UNRESOLVED,
    /** Anything else: its own message says what. */
    OTHER;

    /** The first of the causes along {@code failure}'s chain that this recognizes; OTHER when none. */
    public static Cause of(Throwable failure) {
      for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
        String m = String.valueOf(t.getMessage());
        if (m.contains("Address already in use")) return TAKEN;
        // Linux and Windows say "Cannot", macOS "Can't" (EADDRNOTAVAIL).
        if (m.contains("assign requested address")) return NOT_THIS_MACHINE;
        if (t instanceof java.nio.channels.UnresolvedAddressException || m.contains("UnresolvedAddressException")) {
          return UNRESOLVED;
        }
      }
      return OTHER;
    }
  }

  /** A listener could not bind, for a reason the message names with the setting to change. */
  static final class Refused extends RuntimeException {
    Refused(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * Runs {@code bind}; when it fails for a {@link Cause} other than OTHER, a {@link Refused} naming the
   * listener and the one setting of it to change, with its value. Any other failure is thrown as it came.
   */
  static <T> T bind(Listener listener, Supplier<T> bind) {
    try {
      return bind.get();
    } catch (RuntimeException e) {
      String message = message(listener, Cause.of(e));
      if (message != null) throw new Refused(message, e);
      throw e;
    }
  }

  /** What a failure of {@code cause} says about {@code l}; null for OTHER. */
  static String message(Listener l, Cause cause) {
    return switch (cause) {
      case TAKEN -> l.name() + " port " + l.port() + " is in use (another process listens on it): start this node"
          + " with another " + l.portSetting() + "; docs/configuration.md";
      case NOT_THIS_MACHINE -> l.name() + " host " + l.host() + " is not an address of this machine (cannot listen"
          + " on it): set " + l.hostSetting() + " to one of its addresses" + (advertised(l)
              // The other nodes reach this one at the canonical host: 0.0.0.0 is no address to give them.
              ? " that the other nodes reach (behind NAT, set pekko.remote.artery.bind.hostname to the local one)"
              : ", or 0.0.0.0 for all of them") + "; docs/configuration.md";
      case UNRESOLVED -> l.name() + " host " + l.host() + " does not resolve: set " + l.hostSetting()
          + " to an address of this machine or a name that resolves to one; docs/configuration.md";
      case OTHER -> null;
    };
  }

  private static boolean advertised(Listener l) {
    return l.hostSetting().contains("canonical.hostname");
  }

  /**
   * A hint for a start that failed outside what {@link #bind} names: a listener that did not bind in time.
   * Pekko's "Futures timed out after [3 seconds]" named neither the bind nor the setting.
   */
  static String hint(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof Refused) return "";
      if (t instanceof java.util.concurrent.TimeoutException) {
        return " (a step of the start did not finish in time; on a loaded machine, the cluster port's bind waits"
            + " pekko.remote.artery.bind.bind-timeout (3s), the HTTP port's pekko.http.server.bind-timeout (1s):"
            + " raise them, or start the node again; docs/configuration.md)";
      }
    }
    return "";
  }
}
