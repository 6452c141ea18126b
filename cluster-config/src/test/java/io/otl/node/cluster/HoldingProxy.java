package io.otl.node.cluster;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An HTTP proxy (test code) in front of the Trinity simulator's Ray Jobs API that makes the window
 * between "the backend accepted the submission" and "the node got the answer" observable: the first
 * {@code POST /api/jobs/} is forwarded (so the simulator really accepts the job), and its answer is
 * then held back, never sent. Everything else, before and after, is forwarded unchanged.
 */
final class HoldingProxy implements AutoCloseable {
  private final HttpServer server;
  private final ExecutorService pool = Executors.newCachedThreadPool();
  private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final String target;
  private final AtomicBoolean holdNext = new AtomicBoolean(true);
  private final CountDownLatch submissionAcceptedNotAnswered = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);
  private volatile int heldStatus;

  HoldingProxy(String targetBaseUrl) throws IOException {
    this.target = targetBaseUrl.endsWith("/") ? targetBaseUrl.substring(0, targetBaseUrl.length() - 1) : targetBaseUrl;
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", this::handle);
    server.setExecutor(pool);
    server.start();
  }

  String baseUrl() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** Waits until the first submission reached the backend and its answer is being held. */
  boolean awaitHeldSubmission(Duration bound) throws InterruptedException {
    return submissionAcceptedNotAnswered.await(bound.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** The backend's status for the held submission (what the node never saw). */
  int heldStatus() {
    return heldStatus;
  }

  private void handle(HttpExchange ex) throws IOException {
    try (ex) {
      byte[] body = ex.getRequestBody().readAllBytes();
      HttpRequest.Builder req = HttpRequest.newBuilder(URI.create(target + ex.getRequestURI()))
          .timeout(Duration.ofSeconds(30))
          .method(ex.getRequestMethod(), body.length == 0 ? HttpRequest.BodyPublishers.noBody()
              : HttpRequest.BodyPublishers.ofByteArray(body));
      String type = ex.getRequestHeaders().getFirst("Content-Type");
      if (type != null) req.header("Content-Type", type);
      HttpResponse<byte[]> r = client.send(req.build(), HttpResponse.BodyHandlers.ofByteArray());
      boolean submission = ex.getRequestMethod().equals("POST") && ex.getRequestURI().getPath().equals("/api/jobs/");
      if (submission && holdNext.compareAndSet(true, false)) {
        heldStatus = r.statusCode();
        submissionAcceptedNotAnswered.countDown();
        release.await(); // the node is killed while it waits; the answer is never sent
        return;
      }
      r.headers().firstValue("Content-Type").ifPresent(t -> ex.getResponseHeaders().set("Content-Type", t));
      ex.sendResponseHeaders(r.statusCode(), r.body().length == 0 ? -1 : r.body().length);
      try (OutputStream out = ex.getResponseBody()) {
        out.write(r.body());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    release.countDown();
    server.stop(0);
    pool.shutdownNow();
  }
}
