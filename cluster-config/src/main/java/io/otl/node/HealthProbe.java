package io.otl.node;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * A container health check without curl:
 * {@code java -cp /app/otl-node.jar io.otl.node.HealthProbe [url]} exits 0 when {@code url}
 * answers 2xx within 3 s, else 1. The default URL is the node's readiness,
 * {@code http://127.0.0.1:$OTL_HTTP_PORT/health/ready} (port 8080 when the variable is unset).
 */
public final class HealthProbe {
  private HealthProbe() {}

  public static void main(String[] args) {
    String port = System.getenv().getOrDefault("OTL_HTTP_PORT", "8080");
    String url = args.length > 0 ? args[0] : "http://127.0.0.1:" + port + "/health/ready";
    System.exit(probe(url, Duration.ofSeconds(3)) ? 0 : 1);
  }

  /** True when {@code url} answers a 2xx status within {@code timeout}; prints the outcome. */
  public static boolean probe(String url, Duration timeout) {
    try {
      HttpClient client = HttpClient.newBuilder().connectTimeout(timeout).build();
      HttpResponse<String> r = client.send(HttpRequest.newBuilder(URI.create(url)).timeout(timeout).GET().build(),
          HttpResponse.BodyHandlers.ofString());
      boolean ok = r.statusCode() / 100 == 2;
      System.out.println(url + " -> " + r.statusCode() + (ok ? "" : " " + r.body()));
      return ok;
    } catch (Exception e) {
      System.out.println(url + " -> " + e);
      return false;
    }
  }
}
