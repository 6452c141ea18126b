package io.otl.bench;

import io.otl.core.api.DataCollector;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * W4: feedback latency under an open-loop load. A single pacing thread issues POST
 * /v1/sessions/{id}/feedback at a fixed arrival rate (java.net.http async client, HTTP/1.1); each
 * request's latency runs from its intended send time, so a stalled server is not hidden by a
 * stalled client (no coordinated omission). Targets completed sessions, as user ratings do: each
 * request writes FeedbackRecorded plus a tagged RewardRevised.
 */
final class W4Feedback {
  private W4Feedback() {}

  static Result run(Pg pg, Args args) throws Exception {
    int sessions = args.integer("sessions", 2000);
    int seconds = args.integer("seconds", 20);
    // A node that has served for a while, as in production: a fresh JVM still compiles its hot paths for
    // tens of seconds, and 5 s at 500/s left the first 1,000/s run at p99 181 ms against 6.7 ms for the same
    // rate right after it (quiet machine). The warm-up runs at the highest rate measured.
    int warmSeconds = args.integer("warmup", 30);
    String[] rates = args.string("rates", "250,500,1000").split(",");
    int warmRate = java.util.Arrays.stream(rates).mapToInt(t -> Integer.parseInt(t.trim())).max().orElse(500);
    Result r = new Result("W4", "feedback latency, open loop, HTTP, PostgreSQL");
    Pg.Schema schema = pg.freshSchema("bench_w4");
    var exec = Executors.newFixedThreadPool(2);
    // --node-jvm: the node in a JVM of its own (NodeJvm, -Xmx512m as the image runs it) and the sessions
    // prepared over HTTP; by default node and client share this JVM (the figures of earlier sessions).
    boolean ownJvm = args.flag("node-jvm");
    NodeJvm nodeJvm = null;
    TrainingNode inJvm = null;
    try {
      int port;
      if (ownJvm) {
        nodeJvm = new NodeJvm(pg, schema, java.nio.file.Files.createTempDirectory("w4"), "w4-node");
        List<String> opts = new ArrayList<>(List.of("-D" + PASSIVATE + "=30m"));
        String extra = args.string("node-jvm-opts", "");
        if (!extra.isBlank()) opts.addAll(java.util.Arrays.asList(extra.trim().split("\\s+")));
        nodeJvm.jvmArgs(opts);
        nodeJvm.start();
        nodeJvm.awaitReady(Duration.ofSeconds(300));
        port = nodeJvm.httpPort;
      } else {
        inJvm = Nodes.start(pg, schema, args, true, Map.of(PASSIVATE, "30m"));
        port = inJvm.httpPort();
      }
      HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(exec)
          .connectTimeout(Duration.ofSeconds(5)).build();
      String base = "http://127.0.0.1:" + port;
      List<CompletableFuture<?>> prep = new ArrayList<>();
      for (int s = 0; s < sessions; s++) {
        String user = EventGen.text(new java.util.SplittableRandom(s), 200, 600);
        prep.add(inJvm != null ? prepareEmbedded(inJvm.dataCollector(), s, user) : prepareOverHttp(client, base, s, user));
        if (prep.size() >= 200) {
          CompletableFuture.allOf(prep.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
          prep.clear();
        }
      }
      CompletableFuture.allOf(prep.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
      openLoop(client, base, sessions, warmRate, warmSeconds, "warm");
      long totalErrors = 0;
      Boolean pass = null;
      StringBuilder headline = new StringBuilder();
      for (String rateText : rates) {
        int rate = Integer.parseInt(rateText.trim());
        Run run = openLoop(client, base, sessions, rate, seconds, "r" + rate);
        String k = "at" + rate + "PerSec.";
        r.figure(k + "sent", run.sent).figure(k + "achievedRate", run.sent / run.sendSeconds)
            .figure(k + "p50Ms", run.lat.percentileMs(50)).figure(k + "p90Ms", run.lat.percentileMs(90))
            .figure(k + "p99Ms", run.lat.percentileMs(99)).figure(k + "p999Ms", run.lat.percentileMs(99.9))
            .figure(k + "maxMs", run.lat.maxMs()).figure(k + "non202", run.errors.get())
            .figure(k + "statuses", run.statuses.toString());
        totalErrors += run.errors.get();
        if (headline.length() > 0) headline.append("; ");
        headline.append(String.format("%d/s: p50 %.1f, p99 %.1f ms", rate, run.lat.percentileMs(50),
            run.lat.percentileMs(99)));
        if (rate == 1000) pass = run.lat.percentileMs(99) < 25 && run.errors.get() == 0;
      }
      long rows = pg.count(schema, "SELECT count(*) FROM event_journal WHERE persistence_id LIKE 'AgentSession|w4-%'");
      r.figure("warmupSeconds", warmSeconds).figure("warmupRatePerSec", warmRate).figure("sessions", sessions).figure("secondsPerRate", seconds).figure("journalRows", rows)
          .figure("non202Total", totalErrors);
      r.headline = headline.toString();
      r.target = "p99 < 25 ms at 1,000/s";
      r.pass = pass;
      r.figure("nodeJvm", ownJvm);
    } finally {
      if (inJvm != null) inJvm.close();
      if (nodeJvm != null) nodeJvm.close();
      exec.shutdownNow();
      if (!args.flag("keep")) pg.dropSchema(schema);
    }
    return r;
  }

  private static final String PASSIVATE = "agentscope.training.data-collector.session.passivate-after";

  private static CompletableFuture<?> prepareEmbedded(DataCollector dc, int s, String user) {
    return dc.record("w4-" + s, "bench-agent",
        new SessionInput.Message("u", null, "user", user, null, null),
        new SessionInput.Message("a", null, "assistant", "answer", "m-" + s, 500L),
        new SessionInput.Result("r", null, "SUCCESS", "ok")).toCompletableFuture();
  }

  /** The same three inputs through POST /v1/sessions/{id}/events (202 = in the journal). */
  private static CompletableFuture<?> prepareOverHttp(HttpClient client, String base, int s, String user) {
    var body = EventGen.JSON.createObjectNode().put("agentId", "bench-agent");
    var events = body.putArray("events");
    events.addObject().put("type", "message").put("eventId", "u").put("role", "user").put("content", user);
    events.addObject().put("type", "message").put("eventId", "a").put("role", "assistant").put("content", "answer")
        .put("msgId", "m-" + s).put("latencyMs", 500);
    events.addObject().put("type", "result").put("eventId", "r").put("status", "SUCCESS").put("detail", "ok");
    HttpRequest req = HttpRequest.newBuilder(URI.create(base + "/v1/sessions/w4-" + s + "/events"))
        .timeout(Duration.ofSeconds(60)).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build();
    return client.sendAsync(req, HttpResponse.BodyHandlers.ofString()).thenApply(resp -> {
      if (resp.statusCode() != 202) throw new IllegalStateException(resp.statusCode() + " " + resp.body());
      return resp;
    });
  }

  static final class Run {
    final Latencies lat = new Latencies(100_000);
    final AtomicLong errors = new AtomicLong();
    final Map<Integer, AtomicLong> statuses = new ConcurrentHashMap<>();
    long sent;
    double sendSeconds;
  }

  static Run openLoop(HttpClient client, String base, int sessions, int rate, int seconds, String tag)
      throws Exception {
    Run run = new Run();
    long total = (long) rate * seconds;
    long interval = 1_000_000_000L / rate;
    List<CompletableFuture<?>> inflight = new ArrayList<>((int) total);
    long t0 = System.nanoTime() + 20_000_000L;
    for (long i = 0; i < total; i++) {
      long intended = t0 + i * interval;
      long wait = intended - System.nanoTime();
      if (wait > 0) LockSupport.parkNanos(wait);
      String sid = "w4-" + (i % sessions);
      String body = "{\"kind\":\"RATING\",\"value\":" + (1 + i % 5) + ",\"feedbackId\":\"fb-" + tag + "-" + i + "\"}";
      HttpRequest req = HttpRequest.newBuilder(URI.create(base + "/v1/sessions/" + sid + "/feedback"))
          .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(body)).build();
      inflight.add(client.sendAsync(req, HttpResponse.BodyHandlers.discarding()).handle((resp, err) -> {
        run.lat.add(System.nanoTime() - intended);
        int code = err != null ? -1 : resp.statusCode();
        run.statuses.computeIfAbsent(code, c -> new AtomicLong()).incrementAndGet();
        if (code != 202) run.errors.incrementAndGet();
        return null;
      }));
    }
    run.sent = total;
    run.sendSeconds = (System.nanoTime() - t0) / 1e9;
    CompletableFuture.allOf(inflight.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
    return run;
  }
}
