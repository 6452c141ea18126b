package io.otl.node.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValue;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The host names the node listens on: {@code http.host}, for the HTTP API and the OTLP receiver (there
 * is no {@code otlp.host}: the OTLP port binds the same host), and the cluster's
 * {@code pekko.remote.artery.canonical.hostname}, which the cluster port binds unless
 * {@code pekko.remote.artery.bind.hostname} names another address. A name that does not resolve
 * ({@code OTL_HTTP_HOST=no.such.host.invalid}, {@code OTL_HOSTNAME=no.such.host.invalid}) stopped
 * start-up only at the bind, after the journal was created, with Pekko's "Bind failed …
 * UnresolvedAddressException" naming neither key nor variable. Resolved here with the other checks: the
 * bind would resolve it anyway (no slower), and the JVM caches the answer for it. The lookup is
 * bounded: a resolver that does not answer in time is left to the bind.
 */
final class ListenHostKey {
  private ListenHostKey() {}

  static final String KEY = TrainingSettingsValidator.ROOT + ".http.host";
  static final String CLUSTER_BIND_HOST = "pekko.remote.artery.bind.hostname";
  private static final long LOOKUP_MILLIS = 3000;

  private static final java.util.Set<String> PEKKO_HOST_TOKENS = java.util.Set.of("<getHostAddress>", "<getHostName>");

  /** One sentence per host that does not resolve, naming the key and, when it came from one, the variable. */
  static List<String> errors(Config merged) {
    List<String> errors = new ArrayList<>(unresolved(merged, KEY, "an address of this machine to listen on (an IP"
        + " address, 0.0.0.0 for all of them, or a host name that resolves): this name does not resolve"));
    boolean clusterBindsItsAdvertisedName = !merged.hasPath(CLUSTER_BIND_HOST)
        || merged.getValue(CLUSTER_BIND_HOST).unwrapped() instanceof String bind && bind.isBlank();
    if (clusterBindsItsAdvertisedName) {
      errors.addAll(unresolved(merged, ClusterAddressKeys.HOSTNAME, "a host name or IP address of this machine"
          + " (the cluster port listens on it unless " + CLUSTER_BIND_HOST + " is set): this name does not resolve"));
    }
    return errors;
  }

  private static List<String> unresolved(Config merged, String key, String requirement) {
    if (!merged.hasPath(key)) return List.of();
    ConfigValue v = merged.getValue(key);
    if (!(v.unwrapped() instanceof String host) || host.isBlank()) return List.of(); // the key's own rule
    // ClusterAddressKeys refuses a cluster host with white space; saying it also does not resolve adds nothing.
    if (key.equals(ClusterAddressKeys.HOSTNAME) && host.chars().anyMatch(Character::isWhitespace)) return List.of();
    // Pekko's own tokens for this machine's address or name (<getHostAddress> is its default): not names.
    if (key.equals(ClusterAddressKeys.HOSTNAME) && PEKKO_HOST_TOKENS.contains(host)) return List.of();
    if (resolves(host)) return List.of();
    SettingsCheck check = new SettingsCheck(merged);
    check.error(key, v, requirement);
    return check.errors;
  }

  private static boolean resolves(String host) {
    CompletableFuture<Boolean> lookup = CompletableFuture.supplyAsync(() -> {
      try {
        InetAddress.getByName(host);
        return true;
      } catch (UnknownHostException e) {
        return false;
      }
    }, r -> {
      Thread t = new Thread(r, "listen-host-lookup");
      t.setDaemon(true); // a hung resolver must not keep the JVM alive
      t.start();
    });
    try {
      return lookup.get(LOOKUP_MILLIS, TimeUnit.MILLISECONDS);
    } catch (TimeoutException slowResolver) {
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return true;
    } catch (java.util.concurrent.ExecutionException e) {
      return true; // anything but "unknown host" is the bind's to report
    }
  }
}
