package io.otl.persistence.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionModel.Status;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ingestion from a real broker into a real journal: every event exactly once in the journal,
 * across broker restarts, node restarts and journal failures; bad records dead-lettered with the
 * reason while the stream goes on.
 */
class KafkaIngestTest {
  private static final int SESSIONS = 1000;
  /** Sessions of the restart tests that need no bulk. */
  private static final int SMALL = 300;
  private static final int EVENTS_PER_SESSION = 10;
  /** SessionStarted, 8 messages, the task result and the completion. */
  private static final long ROWS_PER_SESSION = 11;
  /** gone-1's journal rows: SessionStarted and its two messages. */
  private static final long ROWS_GONE = 3;
  private static final Duration INGEST_LIMIT = Duration.ofSeconds(90);

  private static KafkaTestBroker broker;

  @BeforeAll
  static void startBroker() throws Exception {
    broker = KafkaTestBroker.start(4, "ae-kill", "dlq-kill", "ae-bulk", "dlq-bulk", "ae-outage", "dlq-outage", "ae-stop", "dlq-stop",
        "ae-bad", "dlq-bad", "ae-timeout", "dlq-timeout", "ae-retry", "dlq-retry", "ae-late", "dlq-late", "ae-nodlq",
        "ae-huge", "dlq-huge", "prod.ae-renamed", "prod.ae-renamed.dlq", "ae-away", "ae-dup", "dlq-dup",
        "ae-gone", "dlq-gone", "ae-window", "dlq-window", "ae-drain", "dlq-drain", "ae-backoff", "dlq-backoff", "ae-order", "dlq-order");
  }

  @AfterAll
  static void stopBroker() throws Exception {
    if (broker != null) broker.close();
  }

  @Test
  void tenThousandEventsOverAThousandSessionsAreInTheJournalExactlyOnce(@TempDir Path dir) throws Exception {
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, settings(node, "bulk"));
      broker.produce(events("ae-bulk", "bulk-", 0, EVENTS_PER_SESSION));
      awaitRows(node, "AgentSession|bulk-", SESSIONS * ROWS_PER_SESSION);
      assertEachSessionOnce(node, "AgentSession|bulk-");
      AgentSession.State s = node.collector.trajectory("bulk-7").toCompletableFuture().get(10, TimeUnit.SECONDS)
          .orElseThrow();
      assertEquals(Status.COMPLETED, s.status());
      assertEquals(List.of("turn 1", "turn 2", "turn 3", "turn 4", "turn 5", "turn 6", "turn 7", "turn 8"),
          s.messages().stream().map(m -> m.content().replace(" of bulk-7", "")).toList(), "topic order kept");
      assertEquals(0, ingest.deadLettered());
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void brokerStoppedAndRestartedHalfwayLosesAndDoublesNothing(@TempDir Path dir) throws Exception {
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, settings(node, "outage"));
      broker.produce(events("ae-outage", "outage-", 0, EVENTS_PER_SESSION / 2));
      await("some of the first half in the journal", () -> rows(node, "AgentSession|outage-") >= 1000);
      broker.stopBroker();
      // The node keeps serving while the broker is away.
      node.collector.record("direct-while-down", "agent-x",
              new io.otl.core.session.SessionInput.Message("m", null, "user", "hi", null, null))
          .toCompletableFuture().get(10, TimeUnit.SECONDS);
      Thread.sleep(2000); // an outage of a known length: what is being tested, not a wait for a condition
      broker.startBroker();
      broker.produce(events("ae-outage", "outage-", EVENTS_PER_SESSION / 2, EVENTS_PER_SESSION));
      awaitRows(node, "AgentSession|outage-", SESSIONS * ROWS_PER_SESSION);
      assertEachSessionOnce(node, "AgentSession|outage-");
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void aNodeStoppedHalfwayIsResumedByTheNextFromCommittedOffsets(@TempDir Path dir) throws Exception {
    long before;
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaIngest.start(node.system, node.collector, settings(node, "stop"));
      // The first half, until some of it is committed: something to resume from (several batches are
      // written at once and offsets are committed in order, so rows can precede any commit).
      broker.produce(events("ae-stop", "stop-", 0, EVENTS_PER_SESSION / 2, SMALL));
      await("a third in the journal", () -> rows(node, "AgentSession|stop-") >= SMALL * ROWS_PER_SESSION / 3);
      await("some offsets committed", () -> broker.committedOffsets("group-stop") > 0);
    } // the actor system terminates: ingestion stops mid-stream
    // The second half only once the first node is gone: produced before its stop, a quiet machine stored all
    // of it in the stop's drain and there was nothing left to resume (t143 saw "stopped halfway: 3300 rows").
    broker.produce(events("ae-stop", "stop-", EVENTS_PER_SESSION / 2, EVENTS_PER_SESSION, SMALL));
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      before = rows(node, "AgentSession|stop-");
      assertTrue(before < SMALL * ROWS_PER_SESSION, "stopped halfway: " + before + " rows");
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, settings(node, "stop"));
      awaitRows(node, "AgentSession|stop-", SMALL * ROWS_PER_SESSION);
      assertEachSessionOnce(node, "AgentSession|stop-", SMALL);
      // What it read again counts as duplicates: read from offset 0, the two would add up to every record.
      assertTrue(ingest.recorded() + ingest.duplicates() < SMALL * EVENTS_PER_SESSION,
          "the second node resumed from committed offsets instead of re-reading everything: " + ingest.recorded()
              + " recorded, " + ingest.duplicates() + " duplicates");
    }
  }

  @Test
  void aNodeKilledWithSigkillHalfwayLosesAndDoublesNothing(@TempDir Path dir) throws Exception {
    broker.produce(events("ae-kill", "kill-", 0, EVENTS_PER_SESSION, SMALL));
    Path out = dir.resolve("ingest-process.log");
    Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "-Xmx384m", "-cp", System.getProperty("java.class.path"), IngestProcess.class.getName(),
        dir.toString(), broker.bootstrapServers(), "ae-kill", "dlq-kill", "group-kill")
        .redirectErrorStream(true).redirectOutput(out.toFile()).start();
    try {
      await("the other JVM has written a quarter", () -> {
        if (!child.isAlive()) fail("ingest process died: " + java.nio.file.Files.readString(out));
        return recordedByChild(out) >= SMALL * EVENTS_PER_SESSION / 4;
      });
    } finally {
      child.destroyForcibly(); // SIGKILL: no shutdown hook, no commit, no goodbye to the group
      assertTrue(child.waitFor(30, TimeUnit.SECONDS), "killed process is gone");
    }
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      long before = rows(node, "AgentSession|kill-");
      assertTrue(before < SMALL * ROWS_PER_SESSION, "killed halfway: " + before + " rows");
      KafkaSettings settings = KafkaSettings.fromConfig(com.typesafe.config.ConfigFactory
              .parseMap(IngestProcess.crashSettings("ae-kill", "dlq-kill", "group-kill")).atPath("kafka")
              .withFallback(node.training))
          .withBootstrapServers(broker.bootstrapServers());
      KafkaIngest.start(node.system, node.collector, settings);
      awaitRows(node, "AgentSession|kill-", SMALL * ROWS_PER_SESSION);
      assertEachSessionOnce(node, "AgentSession|kill-", SMALL);
    }
  }

  /**
   * What the ingest process reported as recorded (it prints its counter every second). Not read
   * from the journal: a second JVM opening the H2 file would take the file over from the node.
   */
  private static long recordedByChild(Path log) throws java.io.IOException {
    long last = 0;
    for (String line : java.nio.file.Files.readAllLines(log)) {
      if (line.startsWith("recorded ")) last = Long.parseLong(line.substring(9, line.indexOf(',')));
    }
    return last;
  }

  /**
   * A stop lets the writes in flight finish and commits their offsets: cut at once, their records were in
   * the journal but not committed, and the next consumer of the group read them again (trial t105: 1,131 of
   * 12,000 records after a SIGTERM under a backlog, with hundreds of "timed out; sending it again" lines as
   * the writes outlived the sharding regions). Each write here takes 100 ms more, so the stop finds one in
   * flight; the drain finishes them within its 3 s.
   */
  @Test
  void aStopFinishesTheWritesInFlightAndCommitsThem(@TempDir Path dir) throws Exception {
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      // The stop comes once two rounds of four writes are done: a node's first writes, cold, can outlast the
      // drain on a loaded machine; four at a time, the writes in flight finish within it.
      CountDownLatch writing = new CountDownLatch(9);
      KafkaIngest.Recorder slow = delayed(writing, 100, node.collector::submit);
      KafkaIngest first = KafkaIngest.start(node.system, slow, node.kafka(broker, Map.of("group-id", "group-drain",
          "topics.agent-events", "ae-drain", "topics.dead-letter", "dlq-drain", "parallelism", 4)));
      broker.produce(events("ae-drain", "drain-", 0, EVENTS_PER_SESSION, 20));
      assertTrue(writing.await(60, TimeUnit.SECONDS), "a ninth write began");
      first.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);

      KafkaIngest second = KafkaIngest.start(node.system, node.collector, settings(node, "drain"));
      awaitRows(node, "AgentSession|drain-", 20 * ROWS_PER_SESSION);
      await("every record committed", () -> broker.committedOffsets("group-drain") == 20L * EVENTS_PER_SESSION);
      assertEachSessionOnce(node, "AgentSession|drain-", 20);
      assertEquals(0, second.duplicates(), "the next consumer read nothing the stopped one had written");
      assertEquals(20L * EVENTS_PER_SESSION, first.recorded() + second.recorded());
      second.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * The records a session gets while its write waits are written together, from as many batches as
   * the window holds ({@link KafkaIngest#WINDOW_BATCHES} full batches of records): with one-record
   * batches, four batches in flight (sessions 14-40) left the waiting write three records, however
   * many had been polled, and a backlog of interleaved sessions went to the journal ~5 events a write.
   */
  @Test
  void aWaitingSessionsRecordsFromEveryBatchInTheWindowGoIntoItsNextWrite(@TempDir Path dir) throws Exception {
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      CompletableFuture<Void> firstWriteHeld = new CompletableFuture<>();
      List<Integer> writeSizes = java.util.Collections.synchronizedList(new ArrayList<>());
      KafkaIngest.Recorder holdingTheFirst = (sessionId, agentId, inputs) -> {
        writeSizes.add(inputs.size());
        if (writeSizes.size() == 1) return firstWriteHeld.thenCompose(v -> node.collector.submit(sessionId, agentId, inputs));
        return node.collector.submit(sessionId, agentId, inputs);
      };
      int records = KafkaIngest.WINDOW_BATCHES;
      KafkaIngest ingest = KafkaIngest.start(node.system, holdingTheFirst, node.kafka(broker, Map.of(
          "group-id", "group-window", "topics.agent-events", "ae-window", "topics.dead-letter", "dlq-window",
          "ingest.batch-size", 1)));
      broker.produce(events("ae-window", "window-", 0, records, 1));
      await("every record admitted while the first write waits", () -> ingest.recordsInFlight() == records);
      KafkaIngest.Stats waiting = ingest.stats();
      assertEquals(1, waiting.writesRunning(), "the held write runs, the session's next one waits for it");
      assertEquals(1, waiting.sessionsBusy());
      assertEquals(records, waiting.recordsHeld());
      assertEquals(0, waiting.writes(), "no write answered yet");
      firstWriteHeld.complete(null);
      awaitRows(node, "AgentSession|window-", records); // SessionStarted and seven messages
      assertEquals(List.of(1, records - 1), writeSizes, "the first record, then all the others in one write");
      await("both writes answered and their slot given back",
          () -> ingest.stats().writes() == 2 && ingest.stats().writesRunning() == 0);
      KafkaIngest.Stats done = ingest.stats();
      assertEquals(records, done.records(), "every record counted in the write that carried it");
      assertTrue(done.recordWaitNanos() >= done.recordInWriteNanos() && done.recordInWriteNanos() > 0,
          "a record's wait holds its write's: " + done);
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * A session's records reach its writes in topic order across batches in flight: one-record batches
   * of one session, a long record before each short one, so that a stage that parsed batches at once
   * (session 42 tried two at a time) and handed them on as they finished would swap them.
   */
  @Test
  void aSessionsRecordsReachItsWritesInTopicOrderAcrossBatches(@TempDir Path dir) throws Exception {
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      List<String> seen = java.util.Collections.synchronizedList(new ArrayList<>());
      KafkaIngest.Recorder noting = (sessionId, agentId, inputs) -> {
        inputs.forEach(i -> seen.add(i.eventId()));
        return node.collector.submit(sessionId, agentId, inputs);
      };
      KafkaIngest ingest = KafkaIngest.start(node.system, noting, node.kafka(broker, Map.of(
          "group-id", "group-order", "topics.agent-events", "ae-order", "topics.dead-letter", "dlq-order",
          "ingest.batch-size", 1)));
      int records = 200;
      List<ProducerRecord<String, byte[]>> out = new ArrayList<>();
      List<String> sent = new ArrayList<>();
      String common = "\"sessionId\":\"order-1\",\"agentId\":\"agent-0\"";
      out.add(KafkaTestBroker.record("ae-order", "order-1",
          "{\"type\":\"start\",\"eventId\":\"e0\",\"agentVersion\":\"1.0\"," + common + "}"));
      sent.add("e0");
      for (int e = 1; e < records; e++) {
        String content = e % 2 == 1 ? "long ".repeat(1500) : "short";
        out.add(KafkaTestBroker.record("ae-order", "order-1", "{\"type\":\"message\",\"eventId\":\"e" + e
            + "\",\"role\":\"user\",\"content\":\"" + content + "\"," + common + "}"));
        sent.add("e" + e);
      }
      broker.produce(out);
      awaitRows(node, "AgentSession|order-", records);
      // A write that timed out is sent again as it was: order is the order of first sight.
      assertEquals(sent, new ArrayList<>(new java.util.LinkedHashSet<>(seen)), "the session's events as they were sent");
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * A stop starts no new consumer: a write in flight that fails during the drain sends the stream into a
   * restart's back-off, and the consumer its timer started would join the group, poll and begin writes that
   * the stop then cut.
   */
  @Test
  void aWriteFailingDuringTheDrainStartsNoNewConsumer(@TempDir Path dir) throws Exception {
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      CountDownLatch writing = new CountDownLatch(1);
      KafkaIngest.Recorder failing = delayed(writing, 300, (sessionId, agentId, inputs) ->
          CompletableFuture.failedFuture(new IllegalStateException("injected: the journal refuses")));
      KafkaIngest ingest = KafkaIngest.start(node.system, failing,
          settings(node, "backoff").withRestartBackoff(Duration.ofSeconds(1), Duration.ofSeconds(1)));
      broker.produce(events("ae-backoff", "backoff-", 0, 1, 1));
      assertTrue(writing.await(60, TimeUnit.SECONDS), "a write began");
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
      assertEquals(0, ingest.restarts(), "no consumer started after the stop began");
    }
  }

  /** {@code then}, each write begun {@code ms} later, counting {@code writing} down as it begins. */
  private static KafkaIngest.Recorder delayed(CountDownLatch writing, long ms, KafkaIngest.Recorder then) {
    return (sessionId, agentId, inputs) -> {
      writing.countDown();
      return CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(ms, TimeUnit.MILLISECONDS))
          .thenCompose(v -> then.submit(sessionId, agentId, inputs));
    };
  }

  @Test
  void aJournalTimeoutIsSentAgainInPlaceWithoutRestartingTheConsumer(@TempDir Path dir) throws Exception {
    // A fail-over: a few writes time out while their sessions' shard moves. Resent in place, the
    // consumer stays in its group (a restart would make the whole group rebalance).
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      AtomicInteger calls = new AtomicInteger();
      KafkaIngest.Recorder flaky = (sessionId, agentId, inputs) -> {
        int n = calls.incrementAndGet();
        if (n >= 20 && n < 23) {
          return CompletableFuture.failedFuture(new TimeoutException("injected: journal did not answer in time"));
        }
        return node.collector.submit(sessionId, agentId, inputs);
      };
      KafkaIngest ingest = KafkaIngest.start(node.system, flaky, settings(node, "retry"));
      broker.produce(events("ae-retry", "retry-", 0, EVENTS_PER_SESSION, 200));
      awaitRows(node, "AgentSession|retry-", 200 * ROWS_PER_SESSION);
      assertEachSessionOnce(node, "AgentSession|retry-", 200);
      assertEquals(3, ingest.timeoutRetries(), "each timed-out write was sent again");
      assertEquals(0, ingest.restarts(), "no consumer restart for a transient timeout");
      assertEquals(0, ingest.deadLettered(), "a timeout is not a bad record");
    }
  }

  @Test
  void aJournalTimeoutRestartsTheStreamFromTheLastCommittedOffset(@TempDir Path dir) throws Exception {
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      AtomicInteger calls = new AtomicInteger();
      // More timeouts in a row than the in-place resends of one write (KafkaIngest.TIMEOUT_RETRIES)
      // across the writes running at once (parallelism 8 here: with the default 64, a window this size
      // is spread over so many writes that none runs out of resends).
      int failing = 8 * (KafkaIngest.TIMEOUT_RETRIES + 1) + 20;
      KafkaIngest.Recorder flaky = (sessionId, agentId, inputs) -> {
        int n = calls.incrementAndGet();
        if (n >= 20 && n < 20 + failing) {
          return CompletableFuture.failedFuture(new TimeoutException("injected: journal did not answer in time"));
        }
        return node.collector.submit(sessionId, agentId, inputs);
      };
      KafkaIngest ingest = KafkaIngest.start(node.system, flaky, node.kafka(broker, Map.of(
          "group-id", "group-timeout", "topics.agent-events", "ae-timeout", "topics.dead-letter", "dlq-timeout",
          "parallelism", 8)));
      broker.produce(events("ae-timeout", "timeout-", 0, EVENTS_PER_SESSION, 200));
      awaitRows(node, "AgentSession|timeout-", 200 * ROWS_PER_SESSION);
      assertEachSessionOnce(node, "AgentSession|timeout-", 200);
      assertTrue(ingest.restarts() >= 1, "the stream restarted after the timeouts outlasted the resends");
      assertEquals(1, ingest.topicChecks(), "the topics, confirmed at start, are not looked up again on a restart");
      assertEquals(0, ingest.deadLettered(), "a timeout is not a bad record");
    }
  }

  @Test
  void theNodeStartsWhileTheBrokerIsAwayAndIngestsOnceItIsBack(@TempDir Path dir) throws Exception {
    broker.stopBroker();
    // On PostgreSQL, the production journal, when one is reachable (OTL_TEST_PG_URL) or required
    // (OTL_REQUIRE_PG: then a missing one fails the test instead of falling back to H2).
    try (TestNode node = TestNode.start(TestNode.postgresRequiredOrReachable() ? TestNode.postgres() : TestNode.h2(dir))) {
      // Returns with the broker still down: a start that waited for it would never return, since the
      // broker comes back only below.
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, settings(node, "late"));
      node.collector.record("direct", "agent-x",
              new io.otl.core.session.SessionInput.Message("m", null, "user", "hi", null, null))
          .toCompletableFuture().get(60, TimeUnit.SECONDS); // a hang guard: the first write also allocates the shard
      broker.startBroker();
      broker.produce(events("ae-late", "late-", 0, EVENTS_PER_SESSION, 100));
      awaitRows(node, "AgentSession|late-", 100 * ROWS_PER_SESSION);
      assertEachSessionOnce(node, "AgentSession|late-", 100);
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } finally {
      broker.startBroker();
    }
  }

  @Test
  void badRecordsGoToTheDeadLetterTopicWithTheReasonAndTheStreamGoesOn(@TempDir Path dir) throws Exception {
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, settings(node, "bad"));
      List<ProducerRecord<String, byte[]>> records = new ArrayList<>();
      records.add(rec("ae-bad", "ok-1", "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\",\"eventId\":\"a\","
          + "\"sessionId\":\"ok-1\",\"agentId\":\"agent-1\"}"));
      records.add(rec("ae-bad", "bad-json", "{\"type\":\"message\","));
      records.add(rec("ae-bad", "bad-array", "[1,2]"));
      records.add(rec("ae-bad", null, "{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\",\"agentId\":\"agent-1\"}"));
      records.add(rec("ae-bad", "bad-agent", "{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\","
          + "\"sessionId\":\"bad-agent\",\"agentId\":\"a b\"}"));
      records.add(rec("ae-bad", "bad-type", "{\"type\":\"telepathy\",\"sessionId\":\"bad-type\",\"agentId\":\"agent-1\"}"));
      records.add(rec("ae-bad", "bad-field", "{\"type\":\"message\",\"role\":\"user\",\"contnet\":\"typo\","
          + "\"sessionId\":\"bad-field\",\"agentId\":\"agent-1\"}"));
      records.add(rec("ae-bad", "bad-role", "{\"type\":\"message\",\"role\":\"robot\",\"content\":\"x\","
          + "\"sessionId\":\"bad-role\",\"agentId\":\"agent-1\"}"));
      records.add(rec("ae-bad", "ok-1", "{\"type\":\"message\",\"role\":\"user\",\"content\":\"mine\",\"eventId\":\"b\","
          + "\"sessionId\":\"ok-1\",\"agentId\":\"agent-2\"}"));
      records.add(rec("ae-bad", "other-key", "{\"type\":\"message\",\"role\":\"user\",\"content\":\"x\","
          + "\"sessionId\":\"ok-1\",\"agentId\":\"agent-1\"}"));
      records.add(rec("ae-bad", "ok-1", "{\"type\":\"result\",\"status\":\"SUCCESS\",\"eventId\":\"c\","
          + "\"sessionId\":\"ok-1\",\"agentId\":\"agent-1\"}"));
      broker.produce(records);

      List<ConsumerRecord<String, String>> dead = broker.readAll("dlq-bad", 9, Duration.ofSeconds(60),
          Duration.ofSeconds(1));
      Map<String, String> codeByKey = new HashMap<>();
      for (ConsumerRecord<String, String> r : dead) {
        assertNotNull(KafkaTestBroker.header(r, KafkaIngest.ERROR_HEADER), "reason header on " + r.key());
        codeByKey.put(String.valueOf(r.key()), KafkaTestBroker.header(r, KafkaIngest.ERROR_CODE_HEADER));
      }
      assertEquals(Map.of(
          "bad-json", "not_json",
          "bad-array", "not_an_object",
          "null", "invalid_session_id",
          "bad-agent", "invalid_agent_id",
          "bad-type", "invalid_event",
          "bad-field", "invalid_event",
          "bad-role", "invalid",
          "ok-1", "conflict",
          "other-key", "session_mismatch"), codeByKey);
      assertEquals(9, dead.size(), "each bad record dead-lettered once");
      ConsumerRecord<String, String> typo = dead.stream().filter(r -> "bad-field".equals(r.key())).findFirst()
          .orElseThrow();
      assertTrue(KafkaTestBroker.header(typo, KafkaIngest.ERROR_HEADER).contains("contnet"),
          KafkaTestBroker.header(typo, KafkaIngest.ERROR_HEADER));
      assertTrue(typo.value().contains("\"contnet\":\"typo\""), "the original value is kept");
      ConsumerRecord<String, String> role = dead.stream().filter(r -> "bad-role".equals(r.key())).findFirst()
          .orElseThrow();
      // The reason names the field and what is allowed, never the client's value (it may be personal data).
      String roleError = KafkaTestBroker.header(role, KafkaIngest.ERROR_HEADER);
      assertTrue(roleError.startsWith("value.role ") && roleError.contains("assistant"), roleError);
      // A record is one event: named as the parse-time refusals name it (value.type, value.contnet),
      // once, not "events[0].role: events[0].role …" as in an HTTP batch.
      assertEquals(roleError.indexOf("role"), roleError.lastIndexOf("value.role") + "value.".length(), roleError);
      assertFalse(roleError.contains("events["), roleError);
      assertTrue(!roleError.contains("robot"), roleError);

      // The good records around the bad ones are recorded: the stream went on.
      await("ok-1 completed", () -> node.collector.trajectory("ok-1").toCompletableFuture().get(10, TimeUnit.SECONDS)
          .map(st -> st.status() == Status.COMPLETED).orElse(false));
      AgentSession.State ok = node.collector.trajectory("ok-1").toCompletableFuture().get(10, TimeUnit.SECONDS)
          .orElseThrow();
      assertEquals(List.of("hi"), ok.messages().stream().map(m -> m.content()).toList());
      await("counter", () -> ingest.deadLettered() == 9);
      assertEquals(2L, ingest.deadLetteredByCode().get("invalid_event"));
      assertEquals(0, rows(node, "AgentSession|bad-"), "nothing of a bad record reached the journal");
    }
  }

  /**
   * A refused record close to the broker's size limit (1 MB by default, what kafka-console-producer.sh
   * sends at most) no longer fits once the dead letter's headers are added. The send failed, the stream
   * restarted, read the same record and failed again, and every record behind it on the partition
   * waited for good. Now the dead letter goes without the value, saying so, and the stream goes on.
   */
  @Test
  void aRecordTooLargeToDeadLetterWithItsHeadersGoesWithoutItsValueAndTheStreamGoesOn(@TempDir Path dir)
      throws Exception {
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, settings(node, "huge"));
      String prefix = "{\"type\":\"message\",\"role\":\"user\",\"sessionId\":\"huge-1\",\"agentId\":\"agent-1\","
          + "\"eventId\":\"big\",\"content\":\"";
      // Just under the producer's max.request.size (1,048,576 bytes with the record's framing).
      String huge = prefix + "y".repeat(1_048_400 - prefix.length() - 2) + "\"}";
      broker.produce(List.of(
          rec("ae-huge", "huge-1", huge),
          rec("ae-huge", "huge-2", "{\"type\":\"message\",\"role\":\"user\",\"content\":\"after\",\"eventId\":\"a\","
              + "\"sessionId\":\"huge-2\",\"agentId\":\"agent-1\"}")));

      List<ConsumerRecord<String, String>> dead = broker.readAll("dlq-huge", 1, Duration.ofSeconds(60),
          Duration.ofSeconds(1));
      assertEquals(1, dead.size(), "dead-lettered once");
      ConsumerRecord<String, String> letter = dead.get(0);
      assertEquals("huge-1", letter.key());
      assertNull(letter.value(), "the value is left out");
      assertEquals(String.valueOf(huge.length()), KafkaTestBroker.header(letter, KafkaIngest.VALUE_OMITTED_HEADER));
      assertEquals("invalid", KafkaTestBroker.header(letter, KafkaIngest.ERROR_CODE_HEADER));
      assertTrue(KafkaTestBroker.header(letter, KafkaIngest.ERROR_HEADER).startsWith("value.content "),
          KafkaTestBroker.header(letter, KafkaIngest.ERROR_HEADER));
      assertTrue(KafkaTestBroker.header(letter, KafkaIngest.SOURCE_HEADER).startsWith("ae-huge/"));
      await("the record behind it recorded", () -> rows(node, "AgentSession|huge-2") >= 1);
      assertEquals(0, rows(node, "AgentSession|huge-1"), "nothing of the refused record stored");
      assertEquals(0, ingest.restarts(), "no restart of the stream");
    }
  }

  /**
   * "Topics must exist" (docs/api.md): a dead-letter topic nobody created is said at once, by name and
   * key, and nothing is consumed until it exists. Before, good records were ingested and the first bad
   * one stalled the stream (a 60 s wait for the topic, a restart, the same record again), with only
   * the producer's "UNKNOWN_TOPIC_OR_PARTITION" warnings to go on.
   */
  @Test
  void aMissingDeadLetterTopicIsNamedAndIngestionStartsOnceItExists(@TempDir Path dir) throws Exception {
    try (LoggedLines logged = new LoggedLines(KafkaIngest.class); TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, settings(node, "nodlq"));
      broker.produce(List.of(rec("ae-nodlq", "nodlq-1", "{\"type\":\"message\",\"role\":\"user\","
          + "\"content\":\"hi\",\"eventId\":\"a\",\"sessionId\":\"nodlq-1\",\"agentId\":\"agent-1\"}")));
      await("the missing topic named", () -> logged.contain(
          "Kafka topic 'dlq-nodlq' (agentscope.training.kafka.topics.dead-letter) does not exist"));
      assertEquals(0, ingest.recorded(), "nothing consumed while the dead-letter topic is missing");
      await("looked up again on the restart after the missing topic", () -> ingest.topicChecks() >= 2);
      broker.createTopics(4, "dlq-nodlq");
      await("ingested once the topic exists", () -> rows(node, "AgentSession|nodlq-") >= 1);
    }
  }

  /** A first start with neither topic created names both, in the plural (trial t72: "… and … does not exist: create it"). */
  @Test
  void bothMissingTopicsAreNamedTogether(@TempDir Path dir) throws Exception {
    try (LoggedLines logged = new LoggedLines(KafkaIngest.class); TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, settings(node, "none"));
      await("both missing topics named", () -> logged.contain("Kafka topics 'ae-none' "
          + "(agentscope.training.kafka.topics.agent-events) and 'dlq-none' (agentscope.training.kafka.topics.dead-letter)"
          + " do not exist on " + broker.bootstrapServers() + ": create them; ingestion starts once they exist"));
      assertEquals(0, ingest.recorded(), "nothing consumed");
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * Trial t16: a node started while the broker is away, whose dead-letter topic nobody created. The
   * topic check timed out, counted that as an answer and never asked again: once the broker was
   * back the node consumed, never named the missing topic, and said nothing of the broker while it
   * was away. Now the unanswered check is said (WARN naming the broker), asked again with the
   * restart back-off, and the missing topic is named once the broker answers.
   */
  @Test
  void aBrokerAwayAtStartIsSaidAndAMissingDeadLetterTopicIsNamedOnceItIsBack(@TempDir Path dir) throws Exception {
    broker.stopBroker();
    try (LoggedLines logged = new LoggedLines(KafkaIngest.class); LoggedLines pekko = new LoggedLines("org.apache.pekko");
        TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, settings(node, "away"));
      String unanswered = "Kafka broker " + broker.bootstrapServers() + " did not answer within 15 s: ae-away is not consumed";
      await("the unanswered broker said, and said again after a restart", () -> logged.lines().stream()
          .filter(line -> line.contains(unanswered)).count() >= 2);
      Thread.sleep(2_000); // pekko's log lines pass its logging actor first
      // Said once per attempt: pekko's restart repeated each as a WARN with a stack trace (trial-kafka)
      assertEquals(List.of(), pekko.lines().stream().filter(line -> line.contains("did not answer")).toList());
      broker.startBroker();
      broker.produce(List.of(rec("ae-away", "away-1", "{\"type\":\"message\",\"role\":\"user\","
          + "\"content\":\"hi\",\"eventId\":\"a\",\"sessionId\":\"away-1\",\"agentId\":\"agent-1\"}")));
      await("the missing topic named once the broker is back", () -> logged.contain(
          "Kafka topic 'dlq-away' (agentscope.training.kafka.topics.dead-letter) does not exist"));
      assertEquals(0, ingest.recorded(), "nothing consumed while the dead-letter topic is missing");
      broker.createTopics(4, "dlq-away");
      await("ingested once the topic exists", () -> rows(node, "AgentSession|away-") >= 1);
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } finally {
      broker.startBroker();
    }
  }

  /**
   * Trial t36: the dead-letter topic deleted while the node consumes. The first bad record after it
   * waited out the producer's delivery timeout (two minutes by default), the stream restarted straight
   * into the same record (the topics were confirmed at start and never asked about again), and every
   * partition stood still behind it, with only the Kafka client's UNKNOWN_TOPIC_OR_PARTITION warnings
   * to go on. Now a failed dead-letter send makes the restart ask the broker: the missing topic is
   * named as at start, and ingestion goes on, nothing lost or doubled, once it exists again.
   */
  @Test
  void aDeadLetterTopicDeletedUnderTheNodeIsNamedAndIngestionGoesOnOnceItExistsAgain(@TempDir Path dir)
      throws Exception {
    try (LoggedLines logged = new LoggedLines(KafkaIngest.class); TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, node.kafka(broker, Map.of(
          "group-id", "group-gone", "topics.agent-events", "ae-gone", "topics.dead-letter", "dlq-gone",
          // the failed send is seen within seconds instead of Kafka's two minutes
          "client.delivery.timeout.ms", "6000", "client.request.timeout.ms", "5000", "client.max.block.ms", "5000")));
      String event = "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\",\"sessionId\":\"gone-1\","
          + "\"agentId\":\"agent-1\",\"eventId\":";
      broker.produce(List.of(rec("ae-gone", "gone-1", event + "\"a\"}")));
      await("the first stored", () -> ingest.recorded() >= 1);
      broker.deleteTopics("dlq-gone");
      broker.produce(List.of(rec("ae-gone", "gone-1", "not json"), rec("ae-gone", "gone-1", event + "\"b\"}")));
      await("the deleted topic named", () -> logged.contain(
          "Kafka topic 'dlq-gone' (agentscope.training.kafka.topics.dead-letter) does not exist"));
      broker.createTopics(4, "dlq-gone");
      List<ConsumerRecord<String, String>> dead = broker.readAll("dlq-gone", 1, Duration.ofSeconds(60),
          Duration.ofSeconds(1));
      assertEquals(1, dead.size(), "the bad record dead-lettered once the topic exists again");
      assertEquals("not_json", KafkaTestBroker.header(dead.get(0), KafkaIngest.ERROR_CODE_HEADER));
      await("the record behind it stored", () -> ingest.recorded() >= 2);
      assertEquals(2, ingest.recorded(), "each good record stored once");
      assertEquals(ROWS_GONE, rows(node, "AgentSession|gone-"), "SessionStarted and two messages in the journal");
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * Trial t16: a record sent again (a producer retry, a redelivery after a crash) was counted as
   * stored again ({@code otl_kafka_records_recorded_total}, "records stored in the journal"), so the
   * figure overstated the journal and no duplicate showed. Now stored and duplicate are apart.
   */
  @Test
  void aRecordSentAgainIsCountedAsADuplicateNotAsStoredAgain(@TempDir Path dir) throws Exception {
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, settings(node, "dup"));
      String first = "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\",\"eventId\":\"m1\","
          + "\"sessionId\":\"dup-1\",\"agentId\":\"agent-1\"}";
      broker.produce(List.of(rec("ae-dup", "dup-1", first)));
      await("the first stored", () -> ingest.recorded() >= 1);
      long rowsOnce = rows(node, "AgentSession|dup-");
      broker.produce(List.of(rec("ae-dup", "dup-1", first),
          rec("ae-dup", "dup-1", first.replace("\"hi\"", "\"hi again\""))));
      await("both sent again acknowledged", () -> ingest.recorded() + ingest.duplicates() >= 3);
      assertEquals(1, ingest.recorded(), "one record stored");
      assertEquals(2, ingest.duplicates(), "the same eventId twice more: duplicates");
      assertEquals(rowsOnce, rows(node, "AgentSession|dup-"), "nothing more in the journal");
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /** Without topics.dead-letter, the dead letters of a renamed input go to its own "<input>.dlq". */
  @Test
  void aRenamedInputTopicDeadLettersToItsOwnDlqByDefault(@TempDir Path dir) throws Exception {
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaSettings renamed = node.kafka(broker, Map.of("group-id", "group-renamed",
          "topics.agent-events", "prod.ae-renamed"));
      assertEquals("prod.ae-renamed.dlq", renamed.topics().deadLetter());
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, renamed);
      broker.produce(List.of(rec("prod.ae-renamed", "renamed-1", "not json"),
          rec("prod.ae-renamed", "renamed-1", "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\","
              + "\"eventId\":\"a\",\"sessionId\":\"renamed-1\",\"agentId\":\"agent-1\"}")));
      List<ConsumerRecord<String, String>> dead = broker.readAll("prod.ae-renamed.dlq", 1, Duration.ofSeconds(60),
          Duration.ofSeconds(1));
      assertEquals(1, dead.size(), "the bad record, in the renamed input's own dead-letter topic");
      assertEquals("not_json", KafkaTestBroker.header(dead.get(0), KafkaIngest.ERROR_CODE_HEADER));
      awaitRows(node, "AgentSession|renamed-", 1);
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  // ------------------------------------------------------------------------------------------

  private static KafkaSettings settings(TestNode node, String name) {
    return node.kafka(broker, Map.of(
        "group-id", "group-" + name,
        "topics.agent-events", "ae-" + name,
        "topics.dead-letter", "dlq-" + name));
  }

  private static ProducerRecord<String, byte[]> rec(String topic, String key, String value) {
    return KafkaTestBroker.record(topic, key, value);
  }

  static List<ProducerRecord<String, byte[]>> events(String topic, String prefix, int fromEvent, int toEvent) {
    return events(topic, prefix, fromEvent, toEvent, SESSIONS);
  }

  /**
   * Events {@code fromEvent}..{@code toEvent - 1} of each session, round-robin over the sessions
   * (so batches mix sessions); each session: a start, eight messages, a result.
   */
  static List<ProducerRecord<String, byte[]>> events(String topic, String prefix, int fromEvent, int toEvent,
      int sessions) {
    List<ProducerRecord<String, byte[]>> out = new ArrayList<>();
    for (int e = fromEvent; e < toEvent; e++) {
      for (int s = 0; s < sessions; s++) {
        String session = prefix + s;
        String common = "\"eventId\":\"e" + e + "\",\"sessionId\":\"" + session + "\",\"agentId\":\"agent-" + (s % 3)
            + "\"";
        String body;
        if (e == 0) {
          body = "{\"type\":\"start\",\"agentVersion\":\"1.0\",\"modelVersion\":\"v1\"," + common + "}";
        } else if (e == EVENTS_PER_SESSION - 1) {
          body = "{\"type\":\"result\",\"status\":\"SUCCESS\",\"detail\":\"done\"," + common + "}";
        } else {
          body = "{\"type\":\"message\",\"role\":\"" + (e % 2 == 1 ? "user" : "assistant") + "\",\"content\":\"turn "
              + e + " of " + session + "\",\"latencyMs\":" + (100 + e) + "," + common + "}";
        }
        out.add(KafkaTestBroker.record(topic, session, body));
      }
    }
    return out;
  }

  private static long rows(TestNode node, String prefix) {
    try {
      return node.rows(prefix);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static void awaitRows(TestNode node, String prefix, long expected) throws Exception {
    long deadline = System.nanoTime() + INGEST_LIMIT.toNanos();
    long n = 0;
    while (System.nanoTime() < deadline) {
      n = rows(node, prefix);
      if (n >= expected) {
        return;
      }
      Thread.sleep(200);
    }
    fail("journal holds " + n + " rows of " + prefix + " after " + INGEST_LIMIT + ", expected " + expected);
  }

  private static void assertEachSessionOnce(TestNode node, String prefix) throws Exception {
    assertEachSessionOnce(node, prefix, SESSIONS);
  }

  private static void assertEachSessionOnce(TestNode node, String prefix, int sessions) throws Exception {
    Map<String, Long> rows = node.rowsByPersistenceId(prefix);
    assertEquals(sessions, rows.size(), "sessions in the journal");
    rows.forEach((pid, n) -> assertEquals(ROWS_PER_SESSION, n, "journal rows of " + pid));
  }

  interface Condition {
    boolean holds() throws Exception;
  }

  static void await(String what, Condition c) throws Exception {
    long deadline = System.nanoTime() + INGEST_LIMIT.toNanos();
    while (System.nanoTime() < deadline) {
      if (c.holds()) return;
      Thread.sleep(100);
    }
    fail(what + ": not reached within " + INGEST_LIMIT);
  }

}
