package io.otl.bench;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The reliability harness of design §9 (see BENCHMARKS.md):
 *
 * <pre>
 * java -cp benchmarks/target/benchmarks.jar io.otl.bench.Reliability &lt;R1|R2|R3|R4|all&gt; [--option value …]
 * </pre>
 *
 * Nodes run in their own JVMs on 127.0.0.1; every loop is bounded by count and time; the harness
 * stops by itself. R2 stops and starts the benchmark PostgreSQL cluster (never the shared one).
 */
public final class Reliability {
  private Reliability() {}

  public static void main(String[] argv) throws Exception {
    io.otl.node.CommonPool.sizeBeforeFirstUse();
    NodeJvm.killChildrenOnExit();
    if (System.getProperty("logback.configurationFile") == null) {
      System.setProperty("logback.configurationFile", "bench-logback.xml");
    }
    if (argv.length == 0) {
      System.out.println("usage: Reliability <R1|R2|R3|R4|all> [--pg-url …] [--pg-cluster 15/bench] [--results-dir DIR]"
          + " [R4: --kills 3 --sessions 30 --rate 20 --kafka-rate 20 --partitions 6 --settle 10 --ready-timeout 300 --rolling 1 --restart at-once|after-failover]");
      return;
    }
    List<Result> results;
    try {
      results = run(argv[0], new Args(argv, 1));
    } catch (Throwable e) {
      e.printStackTrace();
      System.exit(2);
      return;
    }
    System.out.println();
    System.out.println(Result.header());
    for (Result r : results) System.out.println(r.row());
    System.exit(results.stream().allMatch(r -> Boolean.TRUE.equals(r.pass)) ? 0 : 1);
  }

  public static List<Result> run(String which, Args args) throws Exception {
    Locale.setDefault(Locale.ROOT);
    Pg pg = new Pg(args);
    String db = pg.version();
    Path dir = args.resultsDir();
    Path logs = Files.createDirectories(dir.resolve("logs"));
    String w = which.toUpperCase(Locale.ROOT);
    List<Result> out = new ArrayList<>();
    if (w.equals("ALL") || w.equals("R1")) out.add(publish(r1(pg, args, logs), dir, db));
    if (w.equals("ALL") || w.equals("R2")) out.add(publish(r2(pg, args, logs), dir, db));
    if (w.equals("ALL") || w.equals("R3")) out.add(publish(r3(pg, args, logs), dir, db));
    if (w.equals("ALL") || w.equals("R4")) out.add(publish(R4Failover.run(pg, args, logs), dir, db));
    if (out.isEmpty()) throw new IllegalArgumentException("unknown scenario " + which);
    return out;
  }

  private static Result publish(Result r, Path dir, String db) {
    r.publish(dir, db);
    return r;
  }

  // ------------------------------------------------------------------ R1

  static Result r1(Pg pg, Args args, Path logs) throws Exception {
    int rate = args.integer("rate", 100);
    int seconds = args.integer("seconds", 30);
    int killAt = args.integer("kill-at", 10);
    int sessions = args.integer("sessions", 200);
    Result r = new Result("R1", "kill -9 of a node (own JVM) under HTTP load, restart");
    Pg.Schema schema = pg.freshSchema("rel_r1");
    try (NodeJvm node = new NodeJvm(pg, schema, logs, "r1-node")) {
      node.start();
      long firstReady = node.awaitReady(Duration.ofSeconds(90));
      Client client = new Client(node.httpPort, Duration.ofSeconds(15));
      // Sessions completed before the crash: their answers must be identical afterwards.
      Map<String, String> before = new HashMap<>();
      for (int s = 0; s < 20; s++) {
        String sid = "r1-done-" + s;
        Client.Reply rep = client.post("/v1/sessions/" + sid + "/events", EventGen.body("rel-agent",
            EventGen.events(sid, 0, 6, 6)));
        if (rep.status() != 202) throw new IllegalStateException("prepare " + sid + ": " + rep.status() + rep.body());
        before.put(sid, client.get("/v1/sessions/" + sid).body());
      }
      SteadyLoad load = new SteadyLoad(client, "r1-", sessions);
      long[] restart = new long[2];
      Thread killer = new Thread(() -> {
        try {
          Thread.sleep(TimeUnit.SECONDS.toMillis(killAt));
          restart[0] = System.nanoTime();
          node.kill();
          node.start();
          restart[1] = node.awaitReady(Duration.ofSeconds(120));
        } catch (Exception e) {
          System.err.println("R1 restart failed: " + e);
        }
      });
      killer.start();
      load.run(rate, seconds, Duration.ofSeconds(90));
      killer.join(TimeUnit.SECONDS.toMillis(180));
      long journal = 0;
      long sessionsWrong = 0;
      for (int s = 0; s < sessions; s++) {
        String sid = "r1-" + s;
        long acked = load.ackedEvents.getOrDefault(sid, new java.util.concurrent.atomic.AtomicLong()).get();
        long rows = pg.count(schema, "SELECT count(*) FROM event_journal WHERE persistence_id = 'AgentSession|" + sid
            + "' AND event_ser_manifest NOT LIKE '%SessionStarted' AND event_ser_manifest NOT LIKE 'session.started#%'");
        journal += rows;
        JsonNode view = EventGen.JSON.readTree(client.get("/v1/sessions/" + sid).body());
        if (rows != acked || view.path("messages").size() != acked) sessionsWrong++;
      }
      int changed = 0;
      for (var e : before.entrySet()) {
        if (!e.getValue().equals(client.get("/v1/sessions/" + e.getKey()).body())) changed++;
      }
      long ackedTotal = load.ackedEventTotal();
      r.figure("rateReqPerSec", rate).figure("loadSeconds", seconds).figure("killAtSec", killAt)
          .figure("requestsSent", load.sent.get()).figure("requestsAcked", load.acked.get())
          .figure("requestsGivenUp", load.gaveUp.get()).figure("unexpectedAnswers", load.unexpected.get())
          .figure("eventsAcked", ackedTotal).figure("eventsInJournal", journal)
          .figure("sessionsWithMismatch", sessionsWrong).figure("completedSessionsChanged", changed)
          .figure("firstStartToReadyMs", firstReady).figure("restartToReadyMs", restart[1])
          .figure("statusCounts", statusCounts(load.answers));
      r.pass = ackedTotal == journal && sessionsWrong == 0 && changed == 0 && load.gaveUp.get() == 0
          && load.acked.get() == load.sent.get();
      r.headline = String.format("%,d events acked = %,d in journal; %d/%d sessions answer as acked; %d completed"
              + " sessions changed; restart → ready %.1f s", ackedTotal, journal, sessions - sessionsWrong, sessions,
          changed, restart[1] / 1000.0);
      r.target = "acked = journal, every session as before";
    } finally {
      if (!args.flag("keep")) pg.dropSchema(schema);
    }
    return r;
  }

  // ------------------------------------------------------------------ R2

  static Result r2(Pg pg, Args args, Path logs) throws Exception {
    int rate = args.integer("rate", 50);
    int seconds = args.integer("seconds", 40);
    int stopAt = args.integer("stop-at", 10);
    int outage = args.integer("outage", 10);
    int sessions = args.integer("sessions", 100);
    String cluster = args.string("pg-cluster", "15/bench");
    if (cluster.equals("15/main") && !args.flag("i-own-this-database")) {
      throw new IllegalArgumentException("R2 stops PostgreSQL; refusing to stop the shared cluster 15/main");
    }
    if (!pg.baseUrl.contains(":5433/") && !args.flag("i-own-this-database")) {
      throw new IllegalArgumentException("R2 stops PostgreSQL cluster " + cluster + "; --pg-url must point at it"
          + " (default port 5433)");
    }
    String[] vc = cluster.split("/");
    Result r = new Result("R2", "PostgreSQL stopped " + outage + " s under HTTP load (node in own JVM)");
    Pg.Schema schema = pg.freshSchema("rel_r2");
    try (NodeJvm node = new NodeJvm(pg, schema, logs, "r2-node")) {
      node.start();
      node.awaitReady(Duration.ofSeconds(90));
      Client client = new Client(node.httpPort, Duration.ofSeconds(20));
      SteadyLoad load = new SteadyLoad(client, "r2-", sessions);
      long[] marks = new long[2];
      Thread outageThread = new Thread(() -> {
        try {
          Thread.sleep(TimeUnit.SECONDS.toMillis(stopAt));
          marks[0] = System.nanoTime();
          pgctl(vc[0], vc[1], "stop");
          Thread.sleep(TimeUnit.SECONDS.toMillis(outage));
          pgctl(vc[0], vc[1], "start");
          marks[1] = System.nanoTime();
        } catch (Exception e) {
          System.err.println("R2 outage control failed: " + e);
        }
      });
      outageThread.start();
      load.run(rate, seconds, Duration.ofSeconds(60));
      outageThread.join(TimeUnit.SECONDS.toMillis(120));
      // Answers to requests sent while the database was away (and until the first success after it).
      long firstOkAfter = Long.MAX_VALUE;
      long lastFailure = 0;
      double max503Ms = 0;
      long during = 0;
      Map<Integer, Long> duringStatus = new TreeMap<>();
      synchronized (load.answers) {
        for (SteadyLoad.Answer a : load.answers) {
          long end = a.sentAtNanos() + a.nanos();
          if (a.sentAtNanos() >= marks[0] && a.sentAtNanos() <= marks[1]) {
            during++;
            duringStatus.merge(a.status(), 1L, Long::sum);
          }
          if (a.status() == 503) max503Ms = Math.max(max503Ms, a.nanos() / 1e6);
          if (a.status() == 202 && a.sentAtNanos() >= marks[1]) firstOkAfter = Math.min(firstOkAfter, end);
          if (a.status() != 202) lastFailure = Math.max(lastFailure, end);
        }
      }
      Map<Integer, Long> all = statusCounts(load.answers);
      long other5xx = all.entrySet().stream().filter(e -> e.getKey() >= 500 && e.getKey() != 503)
          .mapToLong(Map.Entry::getValue).sum();
      long hangs = all.getOrDefault(Client.TIMEOUT, 0L);
      long connErrors = all.getOrDefault(Client.CONNECTION_ERROR, 0L);
      long journal = pg.count(schema, "SELECT count(*) FROM event_journal WHERE persistence_id LIKE 'AgentSession|r2-%'"
          + " AND event_ser_manifest NOT LIKE '%SessionStarted' AND event_ser_manifest NOT LIKE 'session.started#%'");
      long ackedTotal = load.ackedEventTotal();
      double recoverySec = firstOkAfter == Long.MAX_VALUE ? -1 : (firstOkAfter - marks[1]) / 1e9;
      double allOkSec = (lastFailure - marks[1]) / 1e9;
      r.figure("rateReqPerSec", rate).figure("outageSec", outage).figure("requestsSent", load.sent.get())
          .figure("requestsSentDuringOutage", during).figure("answersDuringOutage", duringStatus.toString())
          .figure("statusCounts", all.toString()).figure("max503LatencyMs", max503Ms)
          .figure("other5xx", other5xx).figure("clientTimeouts", hangs).figure("connectionErrors", connErrors)
          .figure("firstSuccessAfterDbStartSec", recoverySec).figure("lastFailureAfterDbStartSec", allOkSec)
          .figure("requestsGivenUp", load.gaveUp.get()).figure("eventsAcked", ackedTotal)
          .figure("eventsInJournal", journal).figure("nodeRestarted", false);
      r.pass = other5xx == 0 && hangs == 0 && connErrors == 0 && max503Ms <= 6000 && ackedTotal == journal
          && load.gaveUp.get() == 0 && recoverySec >= 0 && recoverySec < 10;
      r.headline = String.format("answers during outage %s; max 503 latency %.0f ms; other 5xx %d; hangs %d;"
              + " first 202 %.1f s after DB start, last failure %.1f s after; acked %,d = journal %,d",
          duringStatus, max503Ms, other5xx, hangs, recoverySec, allOkSec, ackedTotal, journal);
      r.target = "503 within ask timeout, no other 5xx, nothing lost, serves again within seconds";
    } finally {
      if (!isUp(pg)) pgctl(vc[0], vc[1], "start");
      if (!args.flag("keep")) pg.dropSchema(schema);
    }
    return r;
  }

  private static boolean isUp(Pg pg) {
    try (var c = pg.connect()) {
      return c.isValid(2);
    } catch (Exception e) {
      return false;
    }
  }

  private static void pgctl(String version, String cluster, String action) throws Exception {
    List<String> cmd = new ArrayList<>(List.of("pg_ctlcluster", "--skip-systemctl-redirect", version, cluster, action));
    if (action.equals("stop")) cmd.addAll(List.of("-m", "fast"));
    Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
    String outText = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IllegalStateException(String.join(" ", cmd) + " failed: " + outText);
    }
  }

  // ------------------------------------------------------------------ R3

  static Result r3(Pg pg, Args args, Path logs) throws Exception {
    int bad = args.integer("bad", 10_000);
    int validPerBad = args.integer("valid-every", 5);
    int sessions = args.integer("sessions", 200);
    int threads = args.integer("threads", 8);
    Result r = new Result("R3", "malformed requests mixed into valid load (node in own JVM)");
    Pg.Schema schema = pg.freshSchema("rel_r3");
    try (NodeJvm node = new NodeJvm(pg, schema, logs, "r3-node")) {
      node.start();
      node.awaitReady(Duration.ofSeconds(90));
      Client client = new Client(node.httpPort, Duration.ofSeconds(30));
      // Every valid session exists before bad requests aim at it.
      for (int s = 0; s < sessions; s++) {
        Client.Reply rep = client.post("/v1/sessions/r3-ok-" + s + "/events", BadInput.valid("r3-ok-" + s, -1));
        if (rep.status() != 202) throw new IllegalStateException("prepare: " + rep.status() + " " + rep.body());
      }
      int validCount = bad / validPerBad;
      int total = bad + validCount;
      Map<String, Map<Integer, Long>> byKind = new java.util.concurrent.ConcurrentHashMap<>();
      java.util.concurrent.atomic.AtomicLong badOk = new java.util.concurrent.atomic.AtomicLong();
      java.util.concurrent.atomic.AtomicLong bad5xx = new java.util.concurrent.atomic.AtomicLong();
      java.util.concurrent.atomic.AtomicLong oversizeClosed = new java.util.concurrent.atomic.AtomicLong();
      java.util.concurrent.atomic.AtomicLong validFailed = new java.util.concurrent.atomic.AtomicLong();
      java.util.concurrent.atomic.AtomicLong validOk = new java.util.concurrent.atomic.AtomicLong();
      java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
      var exec = java.util.concurrent.Executors.newFixedThreadPool(threads);
      long t0 = System.nanoTime();
      for (int t = 0; t < threads; t++) {
        exec.execute(() -> {
          for (int i = next.getAndIncrement(); i < total; i = next.getAndIncrement()) {
            if (i % (validPerBad + 1) == validPerBad) {
              int v = i / (validPerBad + 1);
              String sid = "r3-ok-" + (v % sessions);
              Client.Reply rep = client.post("/v1/sessions/" + sid + "/events", BadInput.valid(sid, v));
              if (rep.status() == 202) validOk.incrementAndGet();
              else {
                validFailed.incrementAndGet();
                if (validFailed.get() <= 5) System.err.println("valid request refused: " + rep.status() + rep.body());
              }
            } else {
              BadInput.Request req = BadInput.request(i, sessions);
              Client.Reply rep = client.send(req.method(), req.path(), req.body());
              byKind.computeIfAbsent(req.kind(), k -> new java.util.concurrent.ConcurrentHashMap<>())
                  .merge(rep.status(), 1L, Long::sum);
              if (rep.status() == Client.CONNECTION_ERROR && req.kind().equals("body-over-1MiB")) {
                // The server answers 413 as soon as the declared length is over the limit and closes
                // the connection; a client still uploading may see the close before the answer.
                oversizeClosed.incrementAndGet();
              } else if (rep.status() >= 500 || rep.status() < 0) {
                bad5xx.incrementAndGet();
                if (bad5xx.get() <= 5) System.err.println("bad request " + req.kind() + ": " + rep.status() + " " + rep.body());
              }
              else if (rep.status() < 400) {
                badOk.incrementAndGet();
                if (badOk.get() <= 5) System.err.println("bad request accepted (" + req.kind() + "): " + rep.status());
              }
            }
          }
        });
      }
      exec.shutdown();
      exec.awaitTermination(20, TimeUnit.MINUTES);
      double secs = (System.nanoTime() - t0) / 1e9;
      long badRows = pg.count(schema, "SELECT count(*) FROM event_journal WHERE persistence_id LIKE 'AgentSession|r3-bad-%'");
      long okRows = pg.count(schema, "SELECT count(*) FROM event_journal WHERE persistence_id LIKE 'AgentSession|r3-ok-%'"
          + " AND event_ser_manifest NOT LIKE '%SessionStarted' AND event_ser_manifest NOT LIKE 'session.started#%'");
      long expectedOkRows = 2L * sessions + 2L * validOk.get();
      long badSent = byKind.values().stream().flatMap(m -> m.values().stream()).mapToLong(Long::longValue).sum();
      Map<String, String> kinds = new TreeMap<>();
      byKind.forEach((k, m) -> kinds.put(k, new TreeMap<>(m).toString()));
      r.figure("badRequests", badSent).figure("validRequests", validCount).figure("seconds", secs)
          .figure("bad5xxOrNoAnswer", bad5xx.get())
          .figure("oversizeUploadsCutByServer", oversizeClosed.get()).figure("bad2xx", badOk.get()).figure("validAccepted", validOk.get())
          .figure("validRefused", validFailed.get()).figure("journalRowsOfBadOnlySessions", badRows)
          .figure("journalRowsOfValidSessions", okRows).figure("journalRowsExpected", expectedOkRows)
          .figure("answersByKind", kinds);
      r.pass = bad5xx.get() == 0 && badOk.get() == 0 && validFailed.get() == 0 && badRows == 0
          && okRows == expectedOkRows;
      r.headline = String.format("%,d bad (%d kinds): %d 5xx, %d 2xx; %,d valid all stored: %s; bad-only sessions rows %d",
          badSent, byKind.size(), bad5xx.get(), badOk.get(), validOk.get(), okRows == expectedOkRows, badRows);
      r.target = "zero 5xx, bad change nothing, valid all stored";
    } finally {
      if (!args.flag("keep")) pg.dropSchema(schema);
    }
    return r;
  }

  static Map<Integer, Long> statusCounts(List<SteadyLoad.Answer> answers) {
    Map<Integer, Long> m = new TreeMap<>();
    synchronized (answers) {
      for (SteadyLoad.Answer a : answers) m.merge(a.status(), 1L, Long::sum);
    }
    return m;
  }
}
