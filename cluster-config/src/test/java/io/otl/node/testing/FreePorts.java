package io.otl.node.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.util.HashSet;
import java.util.Set;

/**
 * Ports for node processes a test starts. A port is bound and released here but used later by another
 * process, so the kernel may hand the same ephemeral port out twice in a row: a node then got its HTTP
 * port equal to its own cluster port and failed to bind (TimersAfterCrashTest, CI). This hands out each
 * port at most once per test JVM.
 */
public final class FreePorts {

  private static final Set<Integer> HANDED_OUT = new HashSet<>();

  private FreePorts() {}

  /** A port nothing listened on a moment ago and that no earlier call of this JVM returned. */
  public static synchronized int take() {
    for (int attempt = 0; attempt < 100; attempt++) {
      int port = bindAndRelease();
      if (HANDED_OUT.add(port)) {
        return port;
      }
    }
    throw new IllegalStateException("no fresh ephemeral port after 100 attempts");
  }

  private static int bindAndRelease() {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
