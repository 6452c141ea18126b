package io.otl.node.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for node processes a test starts. A port is checked here but bound later by another process, so it
 * must be one nothing else takes in between. Ports from the kernel's ephemeral range (bound to 0 and
 * released) were not: the kernel handed the same one out twice in a row (a node's HTTP port equal to its own
 * cluster port, TimersAfterCrashTest), and an outgoing connection of a loaded machine took one before the
 * node bound it (FirstSeedRestartTest, CI: node 3's management port, {@code Address already in use}). So the
 * ports come from just below that range (32768-60999 on Linux) and above the node's defaults (8080, 8265,
 * 25520-25522), where the kernel never picks one; each at most once per test JVM, and each of surefire's
 * parallel forks ({@code otl.test.fork}) from a range of its own.
 */
public final class FreePorts {

  private static final int FIRST = 26_000;
  private static final int PER_FORK = 1_500;
  private static final int FORKS = 4;
  private static final Set<Integer> HANDED_OUT = new HashSet<>();

  private FreePorts() {}

  /** A port nothing listened on a moment ago, that no earlier call of this JVM returned, outside the ephemeral range. */
  public static synchronized int take() {
    int from = FIRST + PER_FORK * fork();
    int offset = ThreadLocalRandom.current().nextInt(PER_FORK);
    for (int i = 0; i < PER_FORK; i++) {
      int port = from + (offset + i) % PER_FORK;
      if (!HANDED_OUT.contains(port) && bindable(port)) {
        HANDED_OUT.add(port);
        return port;
      }
    }
    throw new IllegalStateException("no free port left in " + from + "-" + (from + PER_FORK - 1));
  }

  /** 0 to FORKS-1: surefire numbers its forks from 1; a JVM outside surefire (failsafe, an IDE) is 0. */
  private static int fork() {
    try {
      int n = Integer.parseInt(System.getProperty("otl.test.fork", "1"));
      return Math.floorMod(n - 1, FORKS);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private static boolean bindable(int port) {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(false);
      s.bind(new InetSocketAddress(port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }
}
