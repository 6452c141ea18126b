package io.otl.bench;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * R4 (issue #22): a 3-node cluster (three JVMs, one PostgreSQL journal, Kafka ingest on), HTTP and
 * Kafka load on all nodes, and {@code --kills} times (default 3) a {@code kill -9} of one node (each
 * node in turn), then its restart. Per kill: {@code failoverSeconds}, from the kill until every session
 * answers through the survivors (the slowest session is one the dead node held); and
 * {@code kafkaResumeSeconds}, from the kill until every agent-events partition's committed offset has
 * passed the partition's end at the kill (the dead node's partitions resumed, on a survivor or on the
 * restarted node). At the end: {@code lost} (acknowledged HTTP events and broker-acknowledged records
 * missing from the sessions), {@code duplicated} (event ids stored twice), {@code non503Errors}
 * (answers ≥ 500 other than 503). Reports the worst of the kills. Then, unless {@code --rolling 0}, a
 * rolling restart of the three nodes under the same load ({@link R4Rolling}), before those checks.
 */
final class R4Failover {
  private R4Failover() {}

  private static final String TOPIC = "agent-events";
  private static final String GROUP = "otl-ingest";
  private static final String DLQ = "agent-events.dlq";

  /** Event ids "k12"/"h7" in the order they were sent. */
  private static int bySeq(String a, String b) {
    return Long.compare(Long.parseLong(a.substring(1)), Long.parseLong(b.substring(1)));
  }

  static Result run(Pg pg, Args args, Path logs) throws Exception {
    int kills = args.integer("kills", 3);
    int sessions = args.integer("sessions", 30);
    int httpRate = args.integer("rate", 20);
    int kafkaRate = args.integer("kafka-rate", 20);
    int partitions = args.integer("partitions", 6);
    int settle = args.integer("settle", 10);
    // at-once: the victim is started again right after the kill, as a supervisor would; its Join then
    // downs the dead incarnation, often before the split-brain resolver does. after-failover: the victim
    // stays down until its sessions are served again, as after the loss of its machine, so the fail-over
    // is the failure detector's and the resolver's alone.
    String restart = args.string("restart", "at-once");
    if (!restart.equals("at-once") && !restart.equals("after-failover")) {
      throw new IllegalArgumentException("--restart is at-once or after-failover, not " + restart);
    }
    boolean restartAtOnce = restart.equals("at-once");
    // Bounds only (no figure depends on them): JVM start and cluster formation on a busy machine.
    Duration ready = Duration.ofSeconds(args.integer("ready-timeout", 300));
    Result r = new Result("R4", "kill -9 of one of 3 nodes, " + kills + " times, HTTP + Kafka load, restart "
        + (restartAtOnce ? "at once" : "after the fail-over"));
    Pg.Schema schema = pg.freshSchema("rel_r4");
    List<NodeJvm> nodes = new ArrayList<>();
    try (KafkaBroker broker = KafkaBroker.start(partitions, TOPIC, DLQ, "trajectories",
        "model-updates")) {
      int[] ports = {NodeJvm.freePort(), NodeJvm.freePort(), NodeJvm.freePort()};
      String seeds = java.util.Arrays.stream(ports).mapToObj(p -> "pekko://otl@127.0.0.1:" + p)
          .collect(Collectors.joining(","));
      for (int i = 0; i < 3; i++) {
        NodeJvm n = new NodeJvm(pg, schema, logs, "r4-node" + (i + 1), ports[i], Map.of("OTL_SEED_NODES", seeds,
            "OTL_KAFKA_ENABLED", "true", "OTL_KAFKA_BOOTSTRAP", broker.bootstrapServers()));
        // The lines R4Timeline reads (sharding placement at DEBUG, Kafka group membership at INFO).
        n.jvmArgs(List.of("-Dlogback.configurationFile=r4-node-logback.xml", "-Dpekko.loglevel=DEBUG"));
        // --set a.b=1,c.d=x: node settings (HOCON paths) for tuning runs, as system properties.
        for (String kv : args.string("set", "").split(",")) {
          if (kv.indexOf('=') > 0) n.jvmArgs(List.of("-D" + kv.trim()));
        }
        nodes.add(n);
      }
      for (NodeJvm n : nodes) n.start();
      for (NodeJvm n : nodes) n.awaitReady(ready);
      List<Integer> httpPorts = nodes.stream().map(n -> n.httpPort).toList();

      Load load = new Load(httpPorts, sessions, httpRate);
      KafkaLoad kafka = new KafkaLoad(broker, sessions, kafkaRate);
      load.start();
      kafka.start();
      Thread.sleep(TimeUnit.SECONDS.toMillis(settle));
      List<Double> failovers = new ArrayList<>();
      List<Double> kafkaResumes = new ArrayList<>();
      List<Double> rejoins = new ArrayList<>();
      List<Map<String, Object>> timelines = new ArrayList<>();
      for (int k = 0; k < kills; k++) {
        NodeJvm victim = nodes.get(k % 3);
        List<Integer> survivors = new ArrayList<>(httpPorts);
        survivors.remove(Integer.valueOf(victim.httpPort));
        Map<TopicPartition, Long> endsAtKill = endOffsets(broker, partitions);
        Set<Integer> writtenAtKill = new HashSet<>();
        for (int s = 0; s < sessions; s++) if (load.acked.containsKey("r4-h" + s)) writtenAtKill.add(s);
        long t0 = System.nanoTime();
        java.time.Instant killedAt = java.time.Instant.now();
        victim.kill();
        Thread restarter = new Thread(() -> {
          try {
            victim.start();
          } catch (Exception e) {
            System.err.println("R4 restart failed: " + e);
          }
        });
        if (restartAtOnce) restarter.start();
        double failover = allSessionsServed(survivors, sessions, writtenAtKill, t0, Duration.ofSeconds(120),
            Duration.ofMillis(args.integer("poll-ms", 250)));
        if (!restartAtOnce) restarter.start();
        double resume = kafkaResumed(broker, endsAtKill, t0, Duration.ofSeconds(120));
        failovers.add(failover);
        kafkaResumes.add(resume);
        System.out.printf("R4 kill %d of %d (node on :%d): sessions served again after %.1f s, Kafka resumed after "
            + "%.1f s%n", k + 1, kills, victim.httpPort, failover, resume);
        restarter.join();
        double rejoin = restartUntilReady(victim, 3, ready);
        rejoins.add(rejoin < 0 ? Double.POSITIVE_INFINITY : (System.nanoTime() - t0) / 1e9);
        System.out.printf("R4 kill %d: node ready again after %.1f s from the kill%n", k + 1, rejoins.get(k));
        List<R4Timeline.Line> survivorLines = new ArrayList<>();
        for (NodeJvm n : nodes) if (n != victim) survivorLines.addAll(R4Timeline.linesSince(n.log(), killedAt));
        Map<String, Object> timeline = R4Timeline.of(killedAt, survivorLines, R4Timeline.linesSince(victim.log(),
            killedAt), "127.0.0.1:" + victim.clusterPort, failover, resume);
        timeline.put("restartToReady", rejoins.get(k));
        timeline.put("load1", Machine.load1());
        timelines.add(timeline);
        System.out.println("R4 kill " + (k + 1) + " timeline (s after the kill): " + R4Timeline.format(timeline));
        Thread.sleep(TimeUnit.SECONDS.toMillis(settle));
      }
      Map<String, Object> rolling = args.integer("rolling", 1) > 0 ? R4Rolling.run(nodes, broker, GROUP, ready) : null;
      if (rolling != null) Thread.sleep(TimeUnit.SECONDS.toMillis(settle));
      load.stop();
      kafka.stop();
      boolean drained = kafkaDrained(broker, partitions, Duration.ofSeconds(120));
      DeadLetters dlq = DeadLetters.read(broker.bootstrapServers(), DLQ, Duration.ofSeconds(60));
      long lost = 0;
      long duplicated = 0;
      long unreadable = 0;
      long deadLettered = 0;
      long viewsBehind = 0;
      Map<String, Long> lostBySession = new java.util.TreeMap<>();
      List<Client> readers = httpPorts.stream().map(p -> new Client(p, Duration.ofSeconds(30))).toList();
      for (int s = 0; s < sessions; s++) {
        for (String sid : List.of("r4-h" + s, "r4-k" + s)) {
          Set<String> expected = sid.startsWith("r4-h") ? load.acked.getOrDefault(sid, Set.of())
              : kafka.acked.getOrDefault(sid, Set.of());
          // The journal is the truth for lost and duplicated; the nodes' views are checked against it.
          List<String> journal = JournalEventIds.of(pg, schema, sid);
          Set<String> inJournal = new HashSet<>(journal);
          duplicated += journal.size() - inJournal.size();
          List<String> missing = expected.stream().filter(e -> !inJournal.contains(e)).sorted(R4Failover::bySeq).toList();
          // A record the node refused went to the dead-letter topic with its reason: not lost, but not
          // stored either; counted apart (and fails the run: R4 sends nothing a node should refuse).
          List<String> refused = missing.stream().filter(dlq.byEventId::containsKey).toList();
          deadLettered += refused.size();
          lost += missing.size() - refused.size();
          if (!missing.isEmpty()) {
            lostBySession.put(sid, (long) (missing.size() - refused.size()));
            System.out.printf("R4 session %s: acknowledged %d, in the journal %d, missing %d (%s … %s), of them "
                + "dead-lettered %d%s%n", sid, expected.size(), inJournal.size(), missing.size(), missing.get(0),
                missing.get(missing.size() - 1), refused.size(),
                refused.isEmpty() ? "" : " (first: " + dlq.byEventId.get(refused.get(0)) + ")");
          }
          // Every node must show what the journal holds: a node answering from an entity that missed
          // later writes is a second cluster over the same journal (split brain), not a lost event.
          for (int i = 0; i < readers.size(); i++) {
            Client reader = readers.get(i);
            Client.Reply rep = readSession(reader, sid, Duration.ofSeconds(120));
            if (rep.status() != 200 && rep.status() != 404) { // 404: no event of the session stored
              // Not read is not lost: counted apart (and fails the run), so a busy node cannot fake a loss.
              unreadable++;
              System.err.println("R4: session " + sid + " not readable: " + rep.status() + " " + rep.body());
              continue;
            }
            Set<String> seen = new HashSet<>();
            if (rep.status() == 200) {
              for (JsonNode m : EventGen.JSON.readTree(rep.body()).path("messages")) seen.add(m.path("eventId").asText());
            }
            long behind = inJournal.stream().filter(e -> !seen.contains(e)).count();
            if (behind > 0) {
              viewsBehind++;
              System.out.printf("R4 session %s through :%d shows %d of the %d events in the journal: that node "
                  + "serves a stale entity (another cluster over the same journal?)%n", sid, httpPorts.get(i),
                  seen.size(), inJournal.size());
            }
          }
        }
      }
      // Pekko's first seed node joins itself when no other seed answers in time: once at the start is
      // the cluster; any later one (a restarted node) is a second cluster over the same journal.
      long clustersFormed = nodes.stream().mapToLong(n -> n.logLines("is JOINING itself")).sum();
      if (clustersFormed > 1) {
        System.out.println("R4: " + clustersFormed + " clusters were formed (\"is JOINING itself\" in the node logs): "
            + "a restarted node formed its own cluster instead of rejoining");
      }
      if (dlq.records > 0) System.out.println("R4 dead-letter topic: " + dlq.records + " records by code " + dlq.byCode);
      double worstFailover = failovers.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
      double worstResume = kafkaResumes.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
      r.figure("restart", restart).figure("kills", kills).figure("sessions", sessions).figure("httpRatePerSec", httpRate)
          .figure("kafkaRatePerSec", kafkaRate).figure("partitions", partitions)
          .figure("failoverSeconds", worstFailover).figure("failoverSecondsEach", failovers)
          .figure("kafkaResumeSeconds", worstResume).figure("kafkaResumeSecondsEach", kafkaResumes)
          .figure("restartToReadySecondsEach", rejoins).figure("timelineEach", timelines)
          .figure("lost", lost).figure("lostBySession", lostBySession).figure("deadLettered", deadLettered)
          .figure("deadLetterRecords", dlq.records).figure("deadLetteredByCode", dlq.byCode)
          .figure("sessionViewsBehindJournal", viewsBehind).figure("clustersFormed", clustersFormed)
          .figure("duplicated", duplicated).figure("non503Errors", load.non503.get())
          .figure("httpEventsAcked", load.acked.values().stream().mapToLong(Set::size).sum())
          .figure("httpGivenUp", load.gaveUp.get()).figure("answers503", load.got503.get())
          .figure("connectionErrorsOrTimeouts", load.noAnswer.get())
          .figure("kafkaRecordsAcked", kafka.acked.values().stream().mapToLong(Set::size).sum())
          .figure("kafkaDrained", drained).figure("sessionsUnreadable", unreadable);
      if (rolling != null) r.figure("rollingRestart", rolling);
      boolean rollingIngested = rolling == null || (double) rolling.get("kafkaLongestStallSeconds") <= 15;
      boolean allBack = rejoins.stream().allMatch(x -> x < Double.POSITIVE_INFINITY);
      r.figure("allRestartedNodesReady", allBack);
      r.pass = worstFailover < 10 && worstResume <= 15 && lost == 0 && deadLettered == 0 && viewsBehind == 0 && clustersFormed == 1 && duplicated == 0 && load.non503.get() == 0
          && drained && allBack && unreadable == 0 && rollingIngested;
      r.headline = String.format("worst fail-over %.1f s, Kafka resumed %.1f s; lost %d, dead-lettered %d, duplicated "
          + "%d, stale session views %d, clusters formed %d, non-503 errors %d", worstFailover, worstResume, lost,
          deadLettered, duplicated, viewsBehind, clustersFormed, load.non503.get())
          + (rolling == null ? "" : String.format("; rolling restart: Kafka stalled at most %.1f s",
              (double) rolling.get("kafkaLongestStallSeconds")));
      r.target = "fail-over < 10 s, Kafka ≤ 15 s, nothing lost, dead-lettered or duplicated, every node's view = the "
          + "journal, one cluster, no 5xx but 503; a rolling restart keeps Kafka ingesting (no stall > 15 s)";
    } finally {
      for (NodeJvm n : nodes) n.close();
      if (!args.flag("keep")) pg.dropSchema(schema);
    }
    return r;
  }

  /**
   * Waits for the restarted node, starting it again when it exits (a supervisor's restart policy; on
   * an overloaded machine the journal connection can time out at start). -1 when it never got ready.
   */
  private static double restartUntilReady(NodeJvm node, int attempts, Duration ready) throws Exception {
    for (int a = 1; a <= attempts; a++) {
      try {
        return node.awaitReady(ready) / 1000.0;
      } catch (IllegalStateException e) {
        System.err.println("R4: restarted node not ready (attempt " + a + "): " + e.getMessage().lines()
            .reduce((x, y) -> y).orElse(""));
        if (node.alive()) node.kill();
        node.start();
      }
    }
    return -1;
  }

  /** A session's view, retried on 503 or timeouts for up to {@code bound}. */
  private static Client.Reply readSession(Client reader, String sid, Duration bound) {
    long deadline = System.nanoTime() + bound.toNanos();
    Client.Reply rep = reader.get("/v1/sessions/" + sid);
    while (rep.status() != 200 && rep.status() != 404 && System.nanoTime() < deadline) {
      sleep(500);
      rep = reader.get("/v1/sessions/" + sid);
    }
    return rep;
  }

  /**
   * Seconds from {@code t0} until every HTTP session has been served through {@code ports}: a 200,
   * or a 404 for a session with no acknowledged event at the kill ({@code written} lacks it: its
   * entity answered, and it has nothing to show; at load the writers may not have reached every
   * session before the first kill). Each session is asked every {@code every}, without waiting for
   * the previous try (up to 40 in flight per session, each waiting up to 10 s): a try that went to
   * the dead node waits out the node's ask timeout (5 s) before its 503, and a poller that waited
   * for it would add up to those 5 s to the figure. Served = the arrival of the first such answer.
   */
  private static double allSessionsServed(List<Integer> ports, int sessions, Set<Integer> written, long t0,
      Duration bound, Duration every) throws InterruptedException {
    java.net.http.HttpClient http = java.net.http.HttpClient.newBuilder()
        .version(java.net.http.HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(2)).build();
    java.util.concurrent.ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    Map<Integer, long[]> servedAt = new ConcurrentHashMap<>(); // {sent, answered} of the serving try
    Map<Integer, Map<String, Integer>> failed = new ConcurrentHashMap<>(); // per session: answer -> tries
    java.util.concurrent.CountDownLatch all = new java.util.concurrent.CountDownLatch(sessions);
    java.util.concurrent.atomic.AtomicIntegerArray inFlight = new java.util.concurrent.atomic.AtomicIntegerArray(sessions);
    timer.scheduleAtFixedRate(() -> {
      for (int s = 0; s < sessions; s++) {
        int session = s;
        if (servedAt.containsKey(session) || inFlight.get(session) >= 40) continue;
        inFlight.incrementAndGet(session);
        long sent = System.nanoTime();
        java.net.http.HttpRequest req = java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:"
            + ports.get(session % ports.size()) + "/v1/sessions/r4-h" + session)).timeout(Duration.ofSeconds(10)).build();
        http.sendAsync(req, java.net.http.HttpResponse.BodyHandlers.discarding()).whenComplete((rep, err) -> {
          inFlight.decrementAndGet(session);
          int status = err == null ? rep.statusCode() : -1;
          boolean served = status == 200 || (status == 404 && !written.contains(session));
          if (!served) {
            failed.computeIfAbsent(session, k -> new ConcurrentHashMap<>())
                .merge(err == null ? String.valueOf(status) : err.getClass().getSimpleName(), 1, Integer::sum);
          } else if (servedAt.putIfAbsent(session, new long[] {sent, System.nanoTime()}) == null) {
            all.countDown();
          }
        });
      }
    }, 0, every.toMillis(), TimeUnit.MILLISECONDS);
    boolean done = all.await(Math.max(0, t0 + bound.toNanos() - System.nanoTime()), TimeUnit.NANOSECONDS);
    timer.shutdownNow();
    // The slowest sessions, to match with their shard's placement in the node logs: when the serving
    // try was sent (a late answer to an early try is a wait inside the cluster, not a late route),
    // and the failed tries before it.
    System.out.println("R4 slowest sessions (s after the kill: served, its try sent; failed tries): "
        + servedAt.entrySet().stream()
        .sorted((a, b) -> Long.compare(b.getValue()[1], a.getValue()[1])).limit(5)
        .map(e -> String.format("r4-h%d via :%d %.2f, %.2f; %s%s", e.getKey(), ports.get(e.getKey() % ports.size()),
            (e.getValue()[1] - t0) / 1e9, (e.getValue()[0] - t0) / 1e9, failed.getOrDefault(e.getKey(), Map.of()),
            written.contains(e.getKey()) ? "" : " (no event at the kill)"))
        .collect(Collectors.joining(" | ")));
    if (!done) return Double.POSITIVE_INFINITY;
    return (servedAt.values().stream().mapToLong(v -> v[1]).max().orElse(t0) - t0) / 1e9;
  }

  /** Seconds from {@code t0} until every partition's committed offset passed its end at the kill. */
  private static double kafkaResumed(KafkaBroker broker, Map<TopicPartition, Long> endsAtKill, long t0,
      Duration bound) throws Exception {
    try (Admin admin = broker.admin()) {
      while (System.nanoTime() < t0 + bound.toNanos()) {
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(GROUP)
            .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        boolean all = endsAtKill.entrySet().stream().allMatch(e -> {
          OffsetAndMetadata c = committed.get(e.getKey());
          return c != null && c.offset() > e.getValue();
        });
        if (all) return (System.nanoTime() - t0) / 1e9;
        sleep(100);
      }
      return Double.POSITIVE_INFINITY;
    }
  }

  private static boolean kafkaDrained(KafkaBroker broker, int partitions, Duration bound) throws Exception {
    Map<TopicPartition, Long> ends = endOffsets(broker, partitions);
    long deadline = System.nanoTime() + bound.toNanos();
    try (Admin admin = broker.admin()) {
      while (System.nanoTime() < deadline) {
        Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(GROUP)
            .partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS);
        if (ends.entrySet().stream().allMatch(e -> committed.get(e.getKey()) != null
            && committed.get(e.getKey()).offset() >= e.getValue())) {
          return true;
        }
        sleep(200);
      }
    }
    return false;
  }

  private static Map<TopicPartition, Long> endOffsets(KafkaBroker broker, int partitions) throws Exception {
    try (Admin admin = broker.admin()) {
      Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
      for (int p = 0; p < partitions; p++) latest.put(new TopicPartition(TOPIC, p), OffsetSpec.latest());
      Map<TopicPartition, Long> out = new HashMap<>();
      admin.listOffsets(latest).all().get(30, TimeUnit.SECONDS).forEach((tp, info) -> out.put(tp, info.offset()));
      return out;
    }
  }

  private static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * HTTP writers, one event per request with a unique event id, sent first to node {@code i % 3} and on
   * 503, a timeout or a refused connection retried (same body) on the next node, as README's client
   * retry advice says, until acknowledged or 60 s.
   */
  private static final class Load {
    final Map<String, Set<String>> acked = new ConcurrentHashMap<>();
    final AtomicLong non503 = new AtomicLong();
    final AtomicLong got503 = new AtomicLong();
    final AtomicLong noAnswer = new AtomicLong();
    final AtomicLong gaveUp = new AtomicLong();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final AtomicLong seq = new AtomicLong();
    private final List<Thread> threads = new ArrayList<>();
    private final List<Client> clients;
    private final int sessions;
    private final long pauseMs;

    Load(List<Integer> ports, int sessions, int rate) {
      this.clients = ports.stream().map(p -> new Client(p, Duration.ofSeconds(10))).toList();
      this.sessions = sessions;
      this.pauseMs = Math.max(1, 3000L / Math.max(1, rate)); // three writers share the rate
    }

    void start() {
      for (int t = 0; t < 3; t++) {
        int first = t;
        Thread th = new Thread(() -> {
          while (running.get()) {
            write(first);
            sleep(pauseMs);
          }
        }, "r4-http-" + t);
        threads.add(th);
        th.start();
      }
    }

    private void write(int first) {
      long n = seq.incrementAndGet();
      String sid = "r4-h" + (n % sessions);
      String eventId = "h" + n;
      String body = "{\"agentId\":\"rel-agent\",\"events\":[{\"type\":\"message\",\"eventId\":\"" + eventId
          + "\",\"role\":\"user\",\"content\":\"r4 " + n + "\"}]}";
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      for (int attempt = 0; System.nanoTime() < deadline; attempt++) {
        Client.Reply rep = clients.get((first + attempt) % clients.size()).post("/v1/sessions/" + sid + "/events", body);
        if (rep.status() == 202) {
          acked.computeIfAbsent(sid, k -> ConcurrentHashMap.newKeySet()).add(eventId);
          return;
        }
        if (rep.status() == 503) got503.incrementAndGet();
        else if (rep.status() < 0) noAnswer.incrementAndGet();
        else {
          if (rep.status() >= 500) non503.incrementAndGet();
          System.err.println("R4 unexpected answer " + rep.status() + " " + rep.body());
          if (rep.status() < 500) return;
        }
        sleep(200);
      }
      gaveUp.incrementAndGet();
    }

    void stop() throws InterruptedException {
      running.set(false);
      for (Thread t : threads) t.join(TimeUnit.SECONDS.toMillis(90));
    }
  }

  /** A producer of one-event records (key = session id) at a steady rate; remembers what the broker acknowledged. */
  private static final class KafkaLoad {
    final Map<String, Set<String>> acked = new ConcurrentHashMap<>();
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final KafkaProducer<String, byte[]> producer;
    private final int sessions;
    private final long pauseMs;
    private Thread thread;

    KafkaLoad(KafkaBroker broker, int sessions, int rate) {
      this.producer = broker.producer();
      this.sessions = sessions;
      this.pauseMs = Math.max(1, 1000L / Math.max(1, rate));
    }

    void start() {
      thread = new Thread(() -> {
        long n = 0;
        while (running.get()) {
          n++;
          String sid = "r4-k" + (n % sessions);
          String eventId = "k" + n;
          String json = "{\"sessionId\":\"" + sid + "\",\"agentId\":\"rel-agent\",\"type\":\"message\",\"eventId\":\""
              + eventId + "\",\"role\":\"user\",\"content\":\"r4 kafka " + n + "\"}";
          producer.send(new ProducerRecord<>(TOPIC, sid, json.getBytes(StandardCharsets.UTF_8)), (md, err) -> {
            if (err == null) acked.computeIfAbsent(sid, k -> ConcurrentHashMap.newKeySet()).add(eventId);
          });
          sleep(pauseMs);
        }
        producer.flush();
      }, "r4-kafka");
      thread.start();
    }

    void stop() throws InterruptedException {
      running.set(false);
      thread.join(TimeUnit.SECONDS.toMillis(30));
      producer.close();
    }
  }
}
