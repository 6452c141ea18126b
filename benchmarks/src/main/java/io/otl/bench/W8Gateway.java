package io.otl.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.typesafe.config.ConfigFactory;
import io.otl.node.simulator.SimulatorSettings;
import io.otl.node.simulator.TrinitySimulator;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

/**
 * W8: latency the inference gateway adds over calling the model server directly (issue #15 item 7).
 *
 * <p>Three parties, two processes: the node runs in its own JVM ({@link NodeJvm}, PostgreSQL
 * journal, static serving backend), so its CPU is its own; the Trinity simulator's model face
 * (no artificial latency: no quality set, no simulator_* delay fields) and the load generator
 * share the benchmark JVM, on an actor system of their own. One pacing thread sends, in the same
 * run and interleaved, {@code rate} requests/s straight to the simulator and {@code rate}
 * requests/s through {@code POST /v1/chat/completions} of the node (each a new session by default,
 * so every call is also identified, routed and recorded, and its owner is read from the journal;
 * {@code --turns N}: N consecutive calls share a session, whose later turns the gateway knows). Latency runs from the intended send time to the
 * last byte of the answer (no coordinated omission); the added latency is the difference of the
 * two paths' percentiles. Non-streaming and {@code stream: true}.
 *
 * <p>CPU per proxied call: the node process's CPU (/proc) during a gateway-only window minus its
 * CPU during a window of equal length in which only the simulator is called (the node idles), per
 * call. PostgreSQL's CPU is not in it (the database is shared with other work here).
 */
final class W8Gateway {
  private static final ObjectMapper MAPPER = new ObjectMapper();
  /** Consecutive calls of one open-loop sequence that share a session ({@code --turns}). */
  private static int turns = 1;

  private W8Gateway() {}

  static Result run(Pg pg, Args args) throws Exception {
    int seconds = args.integer("seconds", 10);
    // The latency runs measure a node that has served for a while: on a fresh node JVM the first 200/s
    // run (5 s of warm-up at 100/s) added p99 21 ms, after 45 s of warm-up 6.9 ms (quiet machine).
    int warmSeconds = args.integer("warmup", 45);
    String[] rates = args.string("rates", "100,200,400").split(",");
    int cpuRate = args.integer("cpu-rate", 200);
    // Calls per session: 1 (the default) makes every call a session's first, the worst case.
    turns = Math.max(1, args.integer("turns", 1));
    Result r = new Result("W8", "gateway added latency over the model server, open loop, HTTP, PostgreSQL");
    Pg.Schema schema = pg.freshSchema("bench_w8");
    var exec = Executors.newFixedThreadPool(2);
    Path dir = Files.createTempDirectory("w8");
    // The simulator's own actor system (local, quiet): nothing of a node runs in this JVM.
    ActorSystem<Void> simSystem = ActorSystem.create(Behaviors.empty(), "w8-simulator", ConfigFactory.parseMap(Map.of(
        "pekko.actor.provider", "local", "pekko.loglevel", "WARNING")).withFallback(ConfigFactory.load()));
    TrinitySimulator simulator = null;
    NodeJvm node = new NodeJvm(pg, schema, dir, "w8-node", NodeJvm.freePort(), Map.of("OTL_SERVING_BACKEND", "static"));
    String jvmOpts = args.string("node-jvm-opts", "");
    if (!jvmOpts.isBlank()) node.jvmArgs(Arrays.asList(jvmOpts.trim().split("\\s+")));
    try {
      node.start();
      node.awaitReady(Duration.ofSeconds(300)); // a cold JVM on a busy machine took 3 min
      HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(exec)
          .connectTimeout(Duration.ofSeconds(5)).build();
      String gateway = "http://127.0.0.1:" + node.httpPort + "/v1/chat/completions";
      simulator = TrinitySimulator.start(simSystem, SimulatorSettings.defaults().withPort(0)
          .withWorkDir(dir.resolve("sim")));
      String direct = simulator.modelServerUrl() + "/chat/completions";
      register(client, node.httpPort, simulator.modelServerUrl());
      String model = "default";
      interleaved(client, direct, gateway, model, 100, warmSeconds, false, "warm");
      interleaved(client, direct, gateway, model, 100, 2, true, "warms");
      StringBuilder headline = new StringBuilder();
      Boolean pass = null;
      long non200 = 0;
      for (boolean stream : new boolean[] {false, true}) {
        for (String rateText : rates) {
          int rate = Integer.parseInt(rateText.trim());
          Pair p = interleaved(client, direct, gateway, model, rate, seconds, stream, (stream ? "s" : "n") + rate);
          String k = (stream ? "stream" : "whole") + ".at" + rate + "PerSec.";
          for (double q : new double[] {50, 90, 99}) {
            String n = "p" + (int) q;
            r.figure(k + "direct." + n + "Ms", p.direct.lat.percentileMs(q))
                .figure(k + "gateway." + n + "Ms", p.gateway.lat.percentileMs(q))
                .figure(k + "added." + n + "Ms", p.gateway.lat.percentileMs(q) - p.direct.lat.percentileMs(q));
          }
          r.figure(k + "non200", p.direct.errors.get() + p.gateway.errors.get());
          r.figure(k + "load1", Machine.load1());
          non200 += p.direct.errors.get() + p.gateway.errors.get();
          double added99 = p.gateway.lat.percentileMs(99) - p.direct.lat.percentileMs(99);
          if (headline.length() > 0) headline.append("; ");
          headline.append(String.format("%s %d/s: added p50 %.1f, p99 %.1f ms", stream ? "stream" : "whole", rate,
              p.gateway.lat.percentileMs(50) - p.direct.lat.percentileMs(50), added99));
          if (rate == 200 && !stream) pass = added99 < 5 && p.gateway.errors.get() == 0;
        }
      }
      long pid = node.pid();
      // Optional: gateway load before the CPU windows, so the node's hot paths are compiled first.
      int cpuWarmup = args.integer("cpu-warmup", 0);
      for (boolean stream : new boolean[] {false, true}) {
        if (cpuWarmup > 0) load(client, gateway, true, model, cpuRate, cpuWarmup, stream, "cw");
        // The node idles while only the simulator is called: its background CPU over the same span.
        double nodeBefore = Cpu.processSeconds(pid);
        var jitBefore = Cpu.jit(pid);
        var gcBefore = Cpu.gc(pid);
        var switchesBefore = Cpu.voluntarySwitches(pid);
        double benchBefore = Cpu.jvmSeconds();
        load(client, direct, false, model, cpuRate, seconds, stream, "cd");
        double nodeIdle = Cpu.processSeconds(pid) - nodeBefore;
        double jitIdle = Cpu.grown(jitBefore, Cpu.jit(pid));
        double gcIdle = Cpu.grown(gcBefore, Cpu.gc(pid));
        double switchesIdle = Cpu.grown(switchesBefore, Cpu.voluntarySwitches(pid));
        double benchDirect = Cpu.jvmSeconds() - benchBefore;
        nodeBefore = Cpu.processSeconds(pid);
        jitBefore = Cpu.jit(pid);
        gcBefore = Cpu.gc(pid);
        switchesBefore = Cpu.voluntarySwitches(pid);
        load(client, gateway, true, model, cpuRate, seconds, stream, "cg");
        double nodeGateway = Cpu.processSeconds(pid) - nodeBefore;
        double jitGateway = Cpu.grown(jitBefore, Cpu.jit(pid));
        double gcGateway = Cpu.grown(gcBefore, Cpu.gc(pid));
        double switchesGateway = Cpu.grown(switchesBefore, Cpu.voluntarySwitches(pid));
        long calls = (long) cpuRate * seconds;
        String k = stream ? "stream" : "whole";
        double perCall = (nodeGateway - nodeIdle) * 1000 / calls;
        // A fresh node JVM still compiles its hot paths minutes into the run (W8 found 25-37 % of its
        // CPU in the JIT threads): that share is warm-up, not a cost per call of a node that has run
        // for a while, so it is reported apart (a lower bound: see Cpu.grown).
        double jitPerCall = (jitGateway - jitIdle) * 1000 / calls;
        r.figure(k + ".cpuMsPerProxiedCall", perCall)
            .figure(k + ".jitCpuMsPerProxiedCall", jitPerCall)
            .figure(k + ".gcCpuMsPerProxiedCall", (gcGateway - gcIdle) * 1000 / calls)
            .figure(k + ".cpuMsPerProxiedCallWithoutJit", perCall - jitPerCall)
            .figure(k + ".nodeVoluntarySwitchesPerProxiedCall", (switchesGateway - switchesIdle) / calls)
            .figure(k + ".nodeIdleCpuMsPerSecond", nodeIdle * 1000 / (seconds + 2))
            .figure(k + ".simulatorAndClientCpuMsPerDirectCall", benchDirect * 1000 / calls);
        headline.append(String.format("; node CPU per proxied call (%s) %.2f ms (JIT %.2f)", k, perCall, jitPerCall));
      }
      JsonNode traffic = MAPPER.readTree(client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:"
          + node.httpPort + "/v1/models/bench-agent/traffic")).build(), HttpResponse.BodyHandlers.ofString()).body());
      r.figure("nodeAddedLatencyMs", traffic.path("addedLatencyMs").toString());
      r.figure("warmupSeconds", warmSeconds).figure("cpuWarmupSeconds", cpuWarmup).figure("turnsPerSession", turns).figure("secondsPerRate", seconds).figure("cpuRate", cpuRate).figure("non200Total", non200);
      r.headline = headline.toString();
      r.target = "added p99 < 5 ms at 200 req/s";
      r.pass = pass;
    } finally {
      node.close();
      if (simulator != null) simulator.stop();
      simSystem.terminate();
      exec.shutdownNow();
      if (!args.flag("keep")) pg.dropSchema(schema);
    }
    return r;
  }

  /**
   * Registers the simulator's model face as the agent's version and waits until it serves (the
   * first version of an agent without a base model becomes STABLE at once).
   */
  private static void register(HttpClient client, int port, String modelServer) throws Exception {
    HttpResponse<String> reg = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
            + "/v1/models/bench-agent/versions")).header("Content-Type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString("{\"version\":\"v1\",\"artifact\":\"file:///models/v1\","
            + "\"endpoint\":\"" + modelServer + "\"}")).build(), HttpResponse.BodyHandlers.ofString());
    if (reg.statusCode() != 201) throw new IllegalStateException("registration refused: " + reg.body());
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    String last = "";
    while (System.nanoTime() < deadline) {
      last = client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
          + "/v1/models/bench-agent/route?sessionId=w8-probe")).build(), HttpResponse.BodyHandlers.ofString()).body();
      if (MAPPER.readTree(last).path("version").asText("").equals("v1")) return;
      Thread.sleep(500);
    }
    throw new IllegalStateException("v1 never served: " + last);
  }

  static final class Run {
    final Latencies lat = new Latencies(200_000);
    final AtomicLong errors = new AtomicLong();
  }

  record Pair(Run direct, Run gateway) {}

  private static HttpRequest request(String url, String model, boolean stream, String tag, long i, boolean viaGateway) {
    String body = "{\"model\":\"" + (viaGateway ? "default" : model) + "\",\"stream\":" + stream
        + ",\"messages\":[{\"role\":\"system\",\"content\":\"You are a travel agent.\"},"
        + "{\"role\":\"user\",\"content\":\"plan a weekend trip number " + i + " with two museums and a dinner\"}]}";
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30))
        .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body));
    if (viaGateway) b.header("X-Agent-Id", "bench-agent").header("X-Session-Id", "w8-" + tag + "-" + i / turns);
    return b.build();
  }

  private static CompletableFuture<?> send(HttpClient client, HttpRequest req, long intended, Run run) {
    return client.sendAsync(req, HttpResponse.BodyHandlers.ofByteArray()).handle((resp, err) -> {
      run.lat.add(System.nanoTime() - intended);
      if (err != null || resp.statusCode() != 200) run.errors.incrementAndGet();
      return null;
    });
  }

  /** Both paths at {@code rate}/s each, interleaved half an interval apart. */
  static Pair interleaved(HttpClient client, String direct, String gateway, String model, int rate, int seconds,
      boolean stream, String tag) throws Exception {
    Pair p = new Pair(new Run(), new Run());
    long total = (long) rate * seconds;
    long interval = 1_000_000_000L / rate;
    List<CompletableFuture<?>> inflight = new ArrayList<>((int) total * 2);
    long t0 = System.nanoTime() + 20_000_000L;
    for (long i = 0; i < total; i++) {
      for (int path = 0; path < 2; path++) {
        long intended = t0 + i * interval + path * interval / 2;
        long wait = intended - System.nanoTime();
        if (wait > 0) LockSupport.parkNanos(wait);
        boolean viaGateway = (path == 0) == (i % 2 == 0); // alternate which path goes first
        inflight.add(send(client, request(viaGateway ? gateway : direct, model, stream, tag, i, viaGateway), intended,
            viaGateway ? p.gateway : p.direct));
      }
    }
    CompletableFuture.allOf(inflight.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
    return p;
  }

  /** Sends {@code rate}/s to one path for {@code seconds}, then waits 2 s for the node's recording to finish. */
  static Run load(HttpClient client, String url, boolean viaGateway, String model, int rate, int seconds,
      boolean stream, String tag) throws Exception {
    Run run = new Run();
    long total = (long) rate * seconds;
    long interval = 1_000_000_000L / rate;
    List<CompletableFuture<?>> inflight = new ArrayList<>((int) total);
    long t0 = System.nanoTime() + 20_000_000L;
    for (long i = 0; i < total; i++) {
      long intended = t0 + i * interval;
      long wait = intended - System.nanoTime();
      if (wait > 0) LockSupport.parkNanos(wait);
      inflight.add(send(client, request(url, model, stream, tag + (stream ? "s" : "n"), i, viaGateway), intended, run));
    }
    CompletableFuture.allOf(inflight.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
    // Recording is off the response path: let the last turns reach the journal before reading the CPU
    // (both windows wait alike, so the node's idle work cancels out).
    Thread.sleep(2000);
    return run;
  }
}
