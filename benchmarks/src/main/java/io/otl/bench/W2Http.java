package io.otl.bench;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.node.TrainingNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;

/** W2: concurrent HTTP clients posting event batches to POST /v1/sessions/{id}/events (202 = in the journal). */
final class W2Http {
  private W2Http() {}

  static Result run(Pg pg, Args args, Double baseline) throws Exception {
    int sessions = args.integer("sessions", 1000);
    int events = args.integer("events", 20);
    int batch = args.integer("batch", 5);
    int concurrency = args.integer("concurrency", 64);
    Result r = new Result("W2", "ingest, HTTP batches (java.net.http, loopback), PostgreSQL");
    Pg.Schema schema = pg.freshSchema("bench_w2");
    var exec = Executors.newFixedThreadPool(2);
    try (TrainingNode node = Nodes.start(pg, schema, args, true, Map.of())) {
      HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(exec)
          .connectTimeout(Duration.ofSeconds(5)).build();
      String base = "http://127.0.0.1:" + node.httpPort() + "/v1/sessions/";
      Ingest.Sender<String> sender = (sid, body) -> client.sendAsync(
              HttpRequest.newBuilder(URI.create(base + sid + "/events")).timeout(Duration.ofSeconds(30))
                  .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(),
              HttpResponse.BodyHandlers.ofString())
          .thenCompose(resp -> {
            if (resp.statusCode() != 202) {
              return CompletableFuture.failedFuture(new IllegalStateException(resp.statusCode() + " " + resp.body()));
            }
            try {
              JsonNode j = EventGen.JSON.readTree(resp.body());
              return CompletableFuture.completedFuture(j.get("accepted").asInt());
            } catch (Exception e) {
              return CompletableFuture.failedFuture(e);
            }
          });
      // --warmup-sessions: a node in service has compiled its hot paths; a fifth of the run leaves the JIT busy.
      int warm = Math.max(10, args.integer("warmup-sessions", sessions / 5));
      Ingest.drive("w2warm-", Ingest.prepare("w2warm-", warm, events, batch, l -> EventGen.body("bench-agent", l)),
          concurrency, sender, 600);
      if (!args.flag("no-analyze")) pg.analyze(schema);
      List<List<String>> payloads = Ingest.prepare("w2-", sessions, events, batch, l -> EventGen.body("bench-agent", l));
      Ingest.Stats st = Ingest.drive("w2-", payloads, concurrency, sender, 1800);
      IngestReport.fill(r, pg, schema, "w2-", sessions, events, batch, concurrency, st, baseline, 0.12);
    } finally {
      exec.shutdownNow();
      if (!args.flag("keep")) pg.dropSchema(schema);
    }
    return r;
  }
}
