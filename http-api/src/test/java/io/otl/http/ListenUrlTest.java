package io.otl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/**
 * The start-up line names a URL a user can open. Trial t59: the default {@code http.host = 0.0.0.0}
 * was logged as {@code HTTP API listening on http://0:0:0:0:0:0:0:0:8080}.
 */
class ListenUrlTest {

  @Test
  void aWildcardBindShowsTheConfiguredHost() throws Exception {
    try (ServerSocket everyInterface = new ServerSocket(0)) { // bound as the JVM binds 0.0.0.0: IPv6's any address
      InetSocketAddress bound = (InetSocketAddress) everyInterface.getLocalSocketAddress();
      assertEquals("http://0.0.0.0:" + bound.getPort(), HttpServer.listenUrl("0.0.0.0", bound));
    }
  }

  @Test
  void aLoopbackBindShowsItsAddressAndIpv6IsBracketed() throws Exception {
    assertEquals("http://127.0.0.1:8080",
        HttpServer.listenUrl("127.0.0.1", new InetSocketAddress(InetAddress.getByName("127.0.0.1"), 8080)));
    assertEquals("http://[0:0:0:0:0:0:0:1]:8080",
        HttpServer.listenUrl("::1", new InetSocketAddress(InetAddress.getByName("::1"), 8080)));
  }
}
