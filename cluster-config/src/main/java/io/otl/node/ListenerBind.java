package io.otl.node;

import java.io.IOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.UnknownHostException;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Binding a listener, and saying what to change when it cannot bind: pekko's message names the address but
 * not the setting that moves it. The node's listeners (HTTP API, OTLP port, cluster, simulator) bind through
 * {@link #bind}; pekko-management's read-only port is pekko's own. A failure is sorted into a {@link Cause}
 * and, for all but {@link Cause#OTHER}, the start fails with a {@link Refused} naming the one setting to
 * change with its value: the port's when it is taken (8080 is often held by something else on a developer's
 * machine), the host's when it is no address of this machine or does not resolve, the bind timeout's.
 */
public final class ListenerBind {
  private ListenerBind() {}

  /**
   * A listener of this node: its name as the message starts it ("the HTTP API's"), its port and host and the
   * settings that set them (e.g. "OTL_HTTP_PORT (agentscope.training.http.port)"). {@code advertised}: its host
   * is the address given to the other nodes, so 0.0.0.0 is no advice. {@code timeoutSetting}: the bind's time
   * limit with its value, for a listener pekko waits for with one (null: none).
   */
  record Listener(String name, String port, String portSetting, String host, String hostSetting, boolean advertised,
      String timeoutSetting) {
    Listener(String name, int port, String portSetting, String host, String hostSetting) {
      this(name, String.valueOf(port), portSetting, host, hostSetting, false, null);
    }
  }

  /** Why a bind failed (also the {@code simulator} command's, which names its own options). */
  public enum Cause {
    /** Another process listens on the port. */
    TAKEN,
    /**
     * The port refused in words other than English on an address of this machine: taken, or not allowed (a
     * port below 1024 without the right, a range Windows reserves). Which of them, the words do not tell us.
     */
    PORT_REFUSED,
    /** The host is no address of this machine (a typo, another machine's IP). */
    NOT_THIS_MACHINE,
    /** The host name does not resolve (a lookup that outlasted the config check's bound). */
    UNRESOLVED,
    /** The bind did not finish within its time limit (pekko's Await on a loaded machine). */
    TIMED_OUT,
    /** Anything else: its own message says what. */
    OTHER;

    /**
     * The cause of {@code failure}, a bind of {@code host}. The JDK's socket errors are in the machine's
     * language ("Die Adresse wird bereits verwendet"): the English words are only a shortcut, and any other
     * bind failure is sorted by asking this machine whether {@code host} is one of its addresses (review t150):
     * if it is, the port refused, for a reason the words would have told ({@link #PORT_REFUSED}).
     */
    public static Cause of(Throwable failure, String host) {
      boolean bindFailed = false;
      for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
        String m = String.valueOf(t.getMessage());
        if (m.contains("Address already in use")) return TAKEN;
        // Linux and Windows say "Cannot", macOS "Can't" (EADDRNOTAVAIL).
        if (m.contains("assign requested address")) return NOT_THIS_MACHINE;
        // A port below 1024 without the right to it: pekko's own words say it.
        if (m.contains("Permission denied")) return OTHER;
        if (t instanceof java.nio.channels.UnresolvedAddressException || m.contains("UnresolvedAddressException")) {
          return UNRESOLVED;
        }
        if (t instanceof java.util.concurrent.TimeoutException) return TIMED_OUT;
        bindFailed |= t instanceof java.net.BindException || m.contains("java.net.BindException");
      }
      return bindFailed ? ofAddress(host) : OTHER;
    }

    private static Cause ofAddress(String host) {
      try {
        InetAddress address = InetAddress.getByName(host);
        boolean local = address.isAnyLocalAddress() || address.isLoopbackAddress()
            || NetworkInterface.getByInetAddress(address) != null;
        return local ? PORT_REFUSED : NOT_THIS_MACHINE;
      } catch (UnknownHostException e) {
        return UNRESOLVED;
      } catch (IOException e) {
        return OTHER;
      }
    }
  }

  /** A listener could not bind, for a reason the message names with the setting to change. */
  static final class Refused extends RuntimeException {
    Refused(String message, Throwable cause) {
      super(message, cause);
    }
  }

  /**
   * Runs {@code bind}; when it fails for a {@link Cause} this listener has a setting for, a {@link Refused}
   * naming it. Any other failure is thrown as it came (a checked one too: Scala code throws them undeclared).
   */
  static <T> T bind(Listener listener, Supplier<T> bind) {
    try {
      return bind.get();
    } catch (Exception e) {
      Optional<String> message = message(listener, Cause.of(e, listener.host()));
      if (message.isPresent()) throw new Refused(message.get(), e);
      throw e;
    }
  }

  /** What a failure of {@code cause} says about {@code l}; empty when there is no setting of it to name. */
  static Optional<String> message(Listener l, Cause cause) {
    return Optional.ofNullable(switch (cause) {
      case TAKEN -> l.name() + " port " + l.port() + " is in use (another process listens on it): start this node"
          + " with another " + l.portSetting() + "; docs/configuration.md";
      case PORT_REFUSED -> l.name() + " port " + l.port() + " cannot be listened on (another process holds it, or"
          + " it is not allowed here): start this node with another " + l.portSetting() + "; docs/configuration.md";
      case NOT_THIS_MACHINE -> l.name() + " host " + l.host() + " is not an address of this machine (cannot listen"
          + " on it): set " + l.hostSetting() + " to one of its addresses" + (l.advertised()
              ? " that the other nodes reach (behind NAT, set pekko.remote.artery.bind.hostname to the local one)"
              : ", or 0.0.0.0 for all of them") + "; docs/configuration.md";
      case UNRESOLVED -> l.name() + " host " + l.host() + " does not resolve: set " + l.hostSetting()
          + " to an address of this machine or a name that resolves to one; docs/configuration.md";
      case TIMED_OUT -> l.timeoutSetting() == null ? null : l.name() + " port " + l.port() + " did not bind within "
          + l.timeoutSetting() + " (a loaded machine): raise it, or start the node again; docs/configuration.md";
      case OTHER -> null;
    });
  }
}
