package io.otl.node.faults;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.testing.TestDatabases;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP proxy on loopback between the node and PostgreSQL, to cut the database away and bring it
 * back as a network fault does: {@link #cut()} closes every open connection and closes new ones at
 * once; {@link #restore()} forwards again. The real database behind it is never touched.
 */
final class TcpProxy implements AutoCloseable {
  private final String targetHost;
  private final int targetPort;
  private final ServerSocket server;
  private final List<Socket> open = new CopyOnWriteArrayList<>();
  private volatile boolean cut;

  private static final String URL_KEY = "agentscope.training.db.url";

  /**
   * A proxy in front of the PostgreSQL {@code pg} names ({@link TestDatabases#postgres()}: each call is a
   * schema of its own, so the same {@code pg} goes to {@link #through}).
   */
  static TcpProxy toPostgres(Config pg) throws IOException {
    URI direct = uriOf(pg);
    return new TcpProxy(direct.getHost(), direct.getPort() < 0 ? 5432 : direct.getPort());
  }

  /** {@code pg} with its URL through this proxy. */
  Config through(Config pg) {
    URI direct = uriOf(pg);
    String viaProxy = pg.getString(URL_KEY).replace("//" + direct.getRawAuthority() + "/", "//127.0.0.1:" + port() + "/");
    return ConfigFactory.parseMap(Map.of(URL_KEY, viaProxy)).withFallback(pg);
  }

  private static URI uriOf(Config pg) {
    return URI.create(pg.getString(URL_KEY).substring("jdbc:".length()));
  }

  TcpProxy(String targetHost, int targetPort) throws IOException {
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.server = new ServerSocket();
    server.setReuseAddress(true);
    server.bind(new InetSocketAddress("127.0.0.1", 0));
    Thread accept = new Thread(this::acceptLoop, "tcp-proxy-accept");
    accept.setDaemon(true);
    accept.start();
  }

  int port() {
    return server.getLocalPort();
  }

  /** Drops every connection now and every new one until {@link #restore()}. */
  void cut() {
    cut = true;
    for (Socket s : open) closeQuietly(s);
    open.clear();
  }

  void restore() {
    cut = false;
  }

  private void acceptLoop() {
    while (!server.isClosed()) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      if (cut) {
        closeQuietly(client);
        continue;
      }
      try {
        Socket upstream = new Socket(targetHost, targetPort);
        open.add(client);
        open.add(upstream);
        pipe(client, upstream);
        pipe(upstream, client);
      } catch (IOException e) {
        closeQuietly(client);
      }
    }
  }

  private void pipe(Socket from, Socket to) {
    Thread t = new Thread(() -> {
      byte[] buf = new byte[16 * 1024];
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        for (int n; (n = in.read(buf)) >= 0; ) {
          out.write(buf, 0, n);
          out.flush();
        }
      } catch (IOException e) {
        // the other side or cut() closed it
      } finally {
        closeQuietly(from);
        closeQuietly(to);
        open.remove(from);
        open.remove(to);
      }
    }, "tcp-proxy-pipe");
    t.setDaemon(true);
    t.start();
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException ignored) {
      // already closed
    }
  }

  @Override
  public void close() throws IOException {
    server.close();
    cut();
  }
}
