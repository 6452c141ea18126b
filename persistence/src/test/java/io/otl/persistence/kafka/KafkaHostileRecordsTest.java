package io.otl.persistence.kafka;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.otl.core.session.AgentSession;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a producer that is not ours may put on {@code agent-events} (design §7.2, docs/api.md "Kafka"),
 * through a real broker, byte for byte: tombstones, empty and non-UTF-8 values, wrong JSON types,
 * NUL in a text or in the key, a key that is no session id or not UTF-8, a key that disagrees with
 * the value's {@code sessionId}, headers. Each refused record is dead-lettered once with its key,
 * value and headers as sent and a code of the documented list; the good records around them are
 * stored; the stream never restarts.
 */
class KafkaHostileRecordsTest {
  private static final String IN = "ae-hostile";
  private static final String DLQ = "dlq-hostile";
  private static final String ORDER_IN = "ae-order";
  private static final String ORDER_DLQ = "dlq-order";
  private static final String BIG_IN = "ae-bigheader";
  private static final String BIG_DLQ = "dlq-bigheader";
  private static KafkaTestBroker broker;

  @BeforeAll
  static void startBroker() throws Exception {
    // One partition: the dead letters come back in the order sent, so each is matched by position.
    broker = KafkaTestBroker.start(1, IN, DLQ, ORDER_IN, ORDER_DLQ, BIG_IN, BIG_DLQ);
  }

  @AfterAll
  static void stopBroker() throws Exception {
    if (broker != null) broker.close();
  }

  /** A record to send and the code it must be dead-lettered with (null: it must be stored). */
  private record Case(String name, byte[] key, byte[] value, RecordHeaders headers, String code) {}

  private static byte[] utf8(String s) {
    return s == null ? null : s.getBytes(StandardCharsets.UTF_8);
  }

  private static String msg(String sessionField, String extra) {
    return "{\"type\":\"message\",\"role\":\"user\",\"agentId\":\"agent-1\"" + sessionField + extra + "}";
  }

  @Test
  void hostileRecordsAreDeadLetteredAsSentAndTheGoodOnesAroundThemAreStored(@TempDir Path dir) throws Exception {
    RecordHeaders traced = new RecordHeaders();
    traced.add("traceparent", utf8("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
    traced.add("binary", new byte[] {0, (byte) 0xff, 1});
    byte[] notUtf8Key = {'h', 'k', (byte) 0xff, (byte) 0xfe};
    List<Case> cases = new ArrayList<>();
    cases.add(new Case("good-first", utf8("hs-1"), utf8(msg(",\"sessionId\":\"hs-1\"", ",\"content\":\"one\",\"eventId\":\"e1\"")),
        null, null));
    cases.add(new Case("tombstone", utf8("hs-tomb"), null, null, "not_json"));
    cases.add(new Case("empty value", utf8("hs-empty"), new byte[0], null, "not_json"));
    cases.add(new Case("blank value", utf8("hs-blank"), utf8("   "), null, "not_json"));
    cases.add(new Case("JSON null", utf8("hs-null"), utf8("null"), null, "not_an_object"));
    cases.add(new Case("JSON string", utf8("hs-str"), utf8("\"hello\""), null, "not_an_object"));
    cases.add(new Case("not UTF-8 value", utf8("hs-bytes"),
        new byte[] {'{', '"', 't', 'y', 'p', 'e', '"', ':', '"', (byte) 0xff, '"', '}'}, null, "not_json"));
    cases.add(new Case("content a number", utf8("hs-type"), utf8(msg(",\"sessionId\":\"hs-type\"", ",\"content\":5")),
        null, "invalid_event"));
    cases.add(new Case("latencyMs a string", utf8("hs-lat"),
        utf8(msg(",\"sessionId\":\"hs-lat\"", ",\"content\":\"x\",\"latencyMs\":\"fast\"")), null, "invalid_event"));
    cases.add(new Case("sessionId a number", utf8("hs-num"), utf8(msg(",\"sessionId\":5", ",\"content\":\"x\"")), null,
        "invalid_event"));
    cases.add(new Case("NUL in content", utf8("hs-nul"), utf8(msg(",\"sessionId\":\"hs-nul\"", ",\"content\":\"a\\u0000b\"")),
        traced, "invalid_event"));
    cases.add(new Case("NUL in the key", utf8("hs\u0000nul"), utf8(msg("", ",\"content\":\"x\"")), null,
        "invalid_session_id"));
    cases.add(new Case("NUL key against sessionId", utf8("hs\u0000nul"),
        utf8(msg(",\"sessionId\":\"hs-2\"", ",\"content\":\"x\"")), null, "session_mismatch"));
    cases.add(new Case("key not UTF-8", notUtf8Key, utf8(msg("", ",\"content\":\"x\"")), traced, "invalid_session_id"));
    cases.add(new Case("key not UTF-8 against sessionId", notUtf8Key,
        utf8(msg(",\"sessionId\":\"hs-2\"", ",\"content\":\"x\"")), null, "session_mismatch"));
    cases.add(new Case("key 10k long", utf8("k".repeat(10_000)), utf8(msg("", ",\"content\":\"x\"")), null,
        "invalid_session_id"));
    cases.add(new Case("key disagrees", utf8("hs-other"), utf8(msg(",\"sessionId\":\"hs-2\"", ",\"content\":\"x\"")),
        traced, "session_mismatch"));
    cases.add(new Case("no key, no sessionId", null, utf8(msg("", ",\"content\":\"x\"")), null, "invalid_session_id"));
    cases.add(new Case("empty key", new byte[0], utf8(msg(",\"sessionId\":\"hs-2\"", ",\"content\":\"x\"")), null,
        "session_mismatch"));
    cases.add(new Case("content too long", utf8("hs-long"),
        utf8(msg(",\"sessionId\":\"hs-long\"", ",\"content\":\"" + "z".repeat(200_000) + "\"")), null, "invalid"));
    // The good ones: the value names the session without a key, the key names it without a value's
    // sessionId, a record with headers of its own.
    cases.add(new Case("no key", null, utf8(msg(",\"sessionId\":\"hs-2\"", ",\"content\":\"two\",\"eventId\":\"e1\"")),
        null, null));
    cases.add(new Case("key only", utf8("hs-3"), utf8(msg("", ",\"content\":\"three\",\"eventId\":\"e1\"")), null, null));
    cases.add(new Case("good with headers", utf8("hs-1"),
        utf8(msg(",\"sessionId\":\"hs-1\"", ",\"content\":\"one again\",\"eventId\":\"e2\"")), traced, null));

    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, node.kafka(broker, Map.of(
          "group-id", "group-hostile", "topics.agent-events", IN, "topics.dead-letter", DLQ)));
      Map<Long, Case> sentAt = send(cases);
      List<Case> refused = cases.stream().filter(c -> c.code() != null).toList();

      List<ConsumerRecord<byte[], byte[]>> dead = readRaw(DLQ, refused.size(), Duration.ofSeconds(60));
      assertEquals(refused.size(), dead.size(), "each refused record dead-lettered once");
      Map<String, String> expected = new LinkedHashMap<>();
      Map<String, String> actual = new LinkedHashMap<>();
      for (ConsumerRecord<byte[], byte[]> letter : dead) {
        String source = KafkaTestBroker.header(letter, KafkaIngest.SOURCE_HEADER);
        assertNotNull(source, "otl-source");
        assertTrue(source.startsWith(IN + "/0/"), source);
        Case c = sentAt.get(Long.parseLong(source.substring(source.lastIndexOf('/') + 1)));
        assertNotNull(c, "a dead letter of a record sent: " + source);
        expected.put(c.name(), c.code());
        actual.put(c.name(), KafkaTestBroker.header(letter, KafkaIngest.ERROR_CODE_HEADER));
        // "with their key and value as sent": byte for byte, a tombstone's null included.
        assertArrayEquals(c.key(), letter.key(), c.name() + ": the key as sent");
        if (c.value() == null) {
          assertNull(letter.value(), c.name() + ": a tombstone stays a tombstone");
        } else {
          assertArrayEquals(c.value(), letter.value(), c.name() + ": the value as sent");
        }
        if (c.headers() != null) {
          for (Header h : c.headers()) {
            Header kept = letter.headers().lastHeader(h.key());
            assertNotNull(kept, c.name() + ": header " + h.key() + " kept");
            assertArrayEquals(h.value(), kept.value(), c.name() + ": header " + h.key() + " as sent");
          }
        }
        String reason = KafkaTestBroker.header(letter, KafkaIngest.ERROR_HEADER);
        assertNotNull(reason, c.name() + ": otl-error");
        // The reason is a log line too: never the client's text, nor a key that is no session id.
        assertFalse(reason.contains("\u0000") || reason.contains("hello") || reason.contains("kkkkkkkk")
            || reason.contains("zzzz") || reason.contains("fast"), c.name() + ": " + reason);
        assertTrue(reason.length() < 400, c.name() + ": a short reason, " + reason.length() + " chars");
      }
      expected.clear();
      refused.forEach(c -> expected.put(c.name(), c.code()));
      assertEquals(new HashMap<>(expected), new HashMap<>(actual), "dead-letter codes by record");

      // The good records are stored, in the order sent; nothing of a refused one is.
      KafkaIngestTest.await("the good records stored", () -> ingest.recorded() >= 4);
      assertEquals(List.of("one", "one again"), contents(node, "hs-1"));
      assertEquals(List.of("two"), contents(node, "hs-2"));
      assertEquals(List.of("three"), contents(node, "hs-3"));
      for (Case c : refused) {
        String k = c.key() == null ? "" : new String(c.key(), StandardCharsets.UTF_8);
        if (k.startsWith("hs-") && !k.equals("hs-other")) {
          assertEquals(0, node.rows("AgentSession|" + k), c.name() + ": nothing stored");
        }
      }
      assertEquals(refused.size(), ingest.deadLettered());
      assertEquals(0, ingest.restarts(), "no restart of the stream");
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * "A session stores its events in the order the node reads them" and "offsets are committed only
   * after the journal has the events": one session's 400 turns, interleaved with another session's and
   * with refused records, read in batches of 7 (so a session's records span many batches in flight),
   * with the ingestion stopped halfway and a second one of the same group taking over from the
   * committed offsets. The journal holds each turn once, in the order sent.
   */
  @Test
  void aSessionSpreadOverManyBatchesAndARestartIsStoredOnceInTheOrderSent(@TempDir Path dir) throws Exception {
    int turns = 400;
    List<ProducerRecord<String, byte[]>> records = new ArrayList<>();
    List<String> expectedA = new ArrayList<>();
    List<String> expectedB = new ArrayList<>();
    for (int i = 0; i < turns; i++) {
      String role = i % 2 == 0 ? "user" : "assistant";
      String a = "turn " + i;
      expectedA.add(a);
      records.add(KafkaTestBroker.record(ORDER_IN, "ord-a", "{\"type\":\"message\",\"role\":\"" + role
          + "\",\"content\":\"" + a + "\",\"eventId\":\"a" + i + "\",\"agentId\":\"agent-1\"}"));
      if (i % 3 == 0) {
        String b = "b turn " + i;
        expectedB.add(b);
        records.add(KafkaTestBroker.record(ORDER_IN, "ord-b", "{\"type\":\"message\",\"role\":\"user\",\"content\":\""
            + b + "\",\"eventId\":\"b" + i + "\",\"sessionId\":\"ord-b\",\"agentId\":\"agent-1\"}"));
      }
      if (i % 50 == 25) records.add(KafkaTestBroker.record(ORDER_IN, "ord-a", null));
    }
    Map<String, Object> small = Map.of("group-id", "group-order", "topics.agent-events", ORDER_IN,
        "topics.dead-letter", ORDER_DLQ, "ingest.batch-size", 7, "ingest.batch-window", "5ms", "parallelism", 2);
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      // The second half is produced only once the first ingestion has stopped, so the second one has
      // to take over from the committed offsets (a fast first one could otherwise drain everything).
      List<ProducerRecord<String, byte[]>> firstHalf = records.subList(0, records.size() / 2);
      broker.produce(firstHalf);
      KafkaIngest first = KafkaIngest.start(node.system, node.collector, node.kafka(broker, small));
      KafkaIngestTest.await("some turns stored", () -> first.recorded() >= 100);
      first.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
      long committed = broker.committedOffsets("group-order");
      // Stopped mid-stream, its last commits may not have landed (at least once: the second one reads them again).
      assertTrue(committed <= firstHalf.size(), "committed " + committed + " of " + firstHalf.size());
      broker.produce(records.subList(records.size() / 2, records.size()));
      KafkaIngest second = KafkaIngest.start(node.system, node.collector, node.kafka(broker, small));
      KafkaIngestTest.await("every turn stored", () -> node.rows("AgentSession|ord-a") >= 1 + turns
          && node.rows("AgentSession|ord-b") >= 1 + expectedB.size());
      KafkaIngestTest.await("every offset committed", () -> broker.committedOffsets("group-order") == records.size());
      assertEquals(expectedA, contents(node, "ord-a"), "ord-a in the order sent, each turn once");
      assertEquals(expectedB, contents(node, "ord-b"), "ord-b in the order sent, each turn once");
      assertEquals(1 + turns, node.rows("AgentSession|ord-a"), "SessionStarted and each turn once");
      List<ConsumerRecord<byte[], byte[]>> dead = readRaw(ORDER_DLQ, turns / 50, Duration.ofSeconds(60));
      assertTrue(dead.size() >= turns / 50, "the tombstones dead-lettered (again after the restart at most)");
      assertEquals(0, first.restarts() + second.restarts(), "no stream restart");
      second.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  /**
   * A refused record whose size is in its headers (a producer's trace baggage, a 1 MB blob), not its
   * value, or a 1 MB key: with the dead letter's headers added it is over the record size limit even
   * without its value. It was refused on every restart of the stream and the partition stood still
   * behind it; now it goes without key, value and the producer's headers, saying their sizes, and the
   * record behind it is stored without a stream restart.
   */
  @Test
  void aRefusedRecordWithHeadersNearTheSizeLimitIsDeadLetteredAndTheStreamGoesOn(@TempDir Path dir) throws Exception {
    RecordHeaders fat = new RecordHeaders();
    fat.add("baggage", "b".repeat(1_048_380).getBytes(StandardCharsets.UTF_8));
    fat.add("traceparent", utf8("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"));
    try (TestNode node = TestNode.start(TestNode.h2(dir))) {
      KafkaIngest ingest = KafkaIngest.start(node.system, node.collector, node.kafka(broker, Map.of(
          "group-id", "group-bigheader", "topics.agent-events", BIG_IN, "topics.dead-letter", BIG_DLQ)));
      String hugeKey = "k".repeat(1_048_380);
      broker.produce(List.of(
          new ProducerRecord<>(BIG_IN, 0, "big-1", utf8("not json"), fat),
          KafkaTestBroker.record(BIG_IN, hugeKey, msg("", ",\"content\":\"x\"")),
          KafkaTestBroker.record(BIG_IN, "big-2", msg(",\"sessionId\":\"big-2\"", ",\"content\":\"after\""))));
      List<ConsumerRecord<byte[], byte[]>> dead = readRaw(BIG_DLQ, 2, Duration.ofSeconds(60));
      assertEquals(2, dead.size(), "each dead-lettered once");
      // Sent at once, so in either order: each by where it came from.
      dead.sort(java.util.Comparator.comparing(r -> KafkaTestBroker.header(r, KafkaIngest.SOURCE_HEADER)));
      ConsumerRecord<byte[], byte[]> letter = dead.get(0);
      assertEquals("not_json", KafkaTestBroker.header(letter, KafkaIngest.ERROR_CODE_HEADER));
      assertEquals(BIG_IN + "/0/0", KafkaTestBroker.header(letter, KafkaIngest.SOURCE_HEADER));
      // Left out and said so: the record stays at otl-source for the input topic's retention.
      assertNull(letter.key());
      assertNull(letter.value());
      assertNull(letter.headers().lastHeader("baggage"), "the producer's headers left out");
      assertEquals("8", KafkaTestBroker.header(letter, KafkaIngest.VALUE_OMITTED_HEADER));
      assertEquals("5", KafkaTestBroker.header(letter, KafkaIngest.KEY_OMITTED_HEADER));
      assertEquals(String.valueOf("baggage".length() + 1_048_380 + "traceparent".length() + 55),
          KafkaTestBroker.header(letter, KafkaIngest.HEADERS_OMITTED_HEADER));
      ConsumerRecord<byte[], byte[]> keyLetter = dead.get(1);
      assertEquals("invalid_session_id", KafkaTestBroker.header(keyLetter, KafkaIngest.ERROR_CODE_HEADER));
      assertEquals(BIG_IN + "/0/1", KafkaTestBroker.header(keyLetter, KafkaIngest.SOURCE_HEADER));
      assertNull(keyLetter.key());
      assertEquals(String.valueOf(hugeKey.length()), KafkaTestBroker.header(keyLetter, KafkaIngest.KEY_OMITTED_HEADER));
      KafkaIngestTest.await("the record behind it stored", () -> node.rows("AgentSession|big-2") >= 1);
      assertEquals(0, ingest.restarts(), "no restart of the stream");
      ingest.stop().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private static List<String> contents(TestNode node, String sessionId) throws Exception {
    AgentSession.State st = node.collector.trajectory(sessionId).toCompletableFuture().get(10, TimeUnit.SECONDS)
        .orElseThrow();
    return st.messages().stream().map(m -> m.content()).toList();
  }

  /** Sends the cases in order with raw byte keys; returns each case by its offset. */
  private static Map<Long, Case> send(List<Case> cases) throws Exception {
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
    p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    Map<Long, Case> out = new HashMap<>();
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p, new ByteArraySerializer(),
        new ByteArraySerializer())) {
      List<Future<org.apache.kafka.clients.producer.RecordMetadata>> acks = new ArrayList<>();
      for (Case c : cases) {
        acks.add(producer.send(new ProducerRecord<>(IN, 0, c.key(), c.value(),
            c.headers() == null ? new RecordHeaders() : new RecordHeaders(c.headers().toArray()))));
      }
      for (int i = 0; i < cases.size(); i++) out.put(acks.get(i).get(60, TimeUnit.SECONDS).offset(), cases.get(i));
    }
    return out;
  }

  /** Reads {@code topic} raw until {@code atLeast} records came, then 2 s more for extras. */
  private static List<ConsumerRecord<byte[], byte[]>> readRaw(String topic, int atLeast, Duration timeout) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrapServers());
    p.put(ConsumerConfig.GROUP_ID_CONFIG, "raw-reader-" + System.nanoTime());
    p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(p, new ByteArrayDeserializer(),
        new ByteArrayDeserializer())) {
      consumer.subscribe(List.of(topic));
      long deadline = System.nanoTime() + timeout.toNanos();
      long settleUntil = Long.MAX_VALUE;
      while (System.nanoTime() < Math.min(deadline, settleUntil)) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) out.add(r);
        if (out.size() >= atLeast && settleUntil == Long.MAX_VALUE) settleUntil = System.nanoTime() + 2_000_000_000L;
      }
    }
    return out;
  }
}
