package io.otl.persistence.kafka;

import io.otl.core.api.DataCollector;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionInput;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.japi.Pair;
import org.apache.pekko.kafka.CommitterSettings;
import org.apache.pekko.kafka.ConsumerMessage;
import org.apache.pekko.kafka.ConsumerSettings;
import org.apache.pekko.kafka.ProducerSettings;
import org.apache.pekko.kafka.Subscriptions;
import org.apache.pekko.kafka.javadsl.Committer;
import org.apache.pekko.kafka.javadsl.Consumer;
import org.apache.pekko.kafka.javadsl.SendProducer;
import org.apache.pekko.stream.KillSwitches;
import org.apache.pekko.stream.RestartSettings;
import org.apache.pekko.stream.UniqueKillSwitch;
import org.apache.pekko.stream.javadsl.Keep;
import org.apache.pekko.stream.javadsl.RestartSource;
import org.apache.pekko.stream.javadsl.Sink;
import org.apache.pekko.stream.javadsl.Source;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes {@code agent-events} (design §7.2) into the sessions' journal. At-least-once in,
 * idempotent sessions: exactly-once effect.
 *
 * <ul>
 *   <li>A consumer offset is committed only after the journal acknowledged the record (the
 *       {@link DataCollector#submit} stage completed), or after the record was written to the
 *       dead-letter topic.
 *   <li>Records are taken in batches; the records of one session are written in topic order,
 *       consecutive ones as one atomic journal write, one write at a time per session; up to {@code
 *       parallelism} sessions are written at once, from the batches in flight (up to {@value
 *       #WINDOW_BATCHES} × {@code ingest.batch-size} records, {@link RecordWindow}): a session's write
 *       waits for its previous one, in whatever batch ({@link SessionLanes}), so two writes of one
 *       session never overlap or swap, and the records it got from later batches meanwhile go into its
 *       next write together (up to {@value #MAX_RECORDS_PER_WRITE}).
 *   <li>A record that cannot be recorded (not JSON, not an object, bad sessionId/agentId, unknown
 *       type or field, or refused by the session: INVALID, CONFLICT, NOT_FOUND) goes to the
 *       dead-letter topic with its original key and value and the headers {@code otl-error}
 *       (reason) and {@code otl-error-code}; the stream goes on.
 *   <li>A write that times out (the session's node died and its shard is moving, a slow journal) is
 *       sent again in place, after {@value #TIMEOUT_RETRY_PAUSE_MS} ms, up to {@value
 *       #TIMEOUT_RETRIES} times: the session drops event ids it already holds, so a write that did
 *       land is not stored twice. A write waits {@link #WRITE_TIMEOUT}, not the node's ask timeout:
 *       one sent to a node that just died is lost, and the partition's next records wait behind it,
 *       so the sooner it is resent the sooner ingestion resumes once the session's shard has moved
 *       (issue #22, R4: with the 5 s ask timeout a resend could land just before the shard's new
 *       home was known and wait 5 s more). A restart of the stream would close the consumer and make the
 *       group rebalance for every member (issue #22: seven restarts in one fail-over).
 *   <li>Anything else (a timeout past those retries, broker away, commit failure) fails the stream,
 *       which restarts with back-off from the last committed offset. A slow journal so slows consumption
 *       down instead of losing records. Start-up never waits for the broker.
 * </ul>
 */
public final class KafkaIngest {
  private static final Logger log = LoggerFactory.getLogger(KafkaIngest.class);
  /** How long one journal write may take before it is sent again (the session deduplicates). */
  static final Duration WRITE_TIMEOUT = Duration.ofSeconds(2);
  /** Resends of one timed-out write before the stream fails: ~30 s of patience with the pause below. */
  static final int TIMEOUT_RETRIES = 12;
  static final long TIMEOUT_RETRY_PAUSE_MS = 500;
  /**
   * Records held at once, in full batches ({@code ingest.batch-size} each): 16,000 records with the
   * defaults. One batch at a time, a batch of many sessions' records waited for its slowest session
   * before the next poll's records started, and the journal's write batches stayed small; four
   * batches at a time (sessions 14-40) held only ~5,300 records under a backlog, since the poll and
   * the batch window cut batches short, so a write carried ~5 events where records of 1,000
   * sessions interleave. Offsets are still committed in topic order (mapAsync keeps it) and a
   * session's writes still run one after the other ({@link SessionLanes}).
   */
  static final int WINDOW_BATCHES = 8;
  /** Batches in flight at most, however small: a trickle of one-record batches needs no more. */
  static final int MAX_BATCHES_IN_FLIGHT = 64;
  /**
   * How long a stop waits for the batches in flight: within pekko's 5 s for the service-stop phase (after
   * which the sharding regions the writes go to shut down), with room for the consumer's close.
   */
  static final Duration DRAIN_TIMEOUT = Duration.ofSeconds(3);
  /**
   * Records of one session that a write gathers from the batches in flight (a batch's own records
   * of a session are never split): the HTTP edge's default {@code max-events-per-request}.
   */
  static final int MAX_RECORDS_PER_WRITE = 1000;

  /** Header with the reason a record was dead-lettered. */
  public static final String ERROR_HEADER = "otl-error";
  /** Header with the machine-readable code (see {@link AgentEventRecord} and {@link #rejectionCode}). */
  public static final String ERROR_CODE_HEADER = "otl-error-code";
  /** Header with where the record came from: {@code topic/partition/offset}. */
  public static final String SOURCE_HEADER = "otl-source";
  /**
   * Header of a dead letter sent without the value, which with our headers was over the record size
   * limit (of the producer or the topic): the value's size in bytes.
   */
  public static final String VALUE_OMITTED_HEADER = "otl-value-omitted";
  /**
   * Headers of a dead letter that was over the size limit even without its value (the size was in
   * its key or its own headers): sent without key and the producer's headers, these give their sizes.
   */
  public static final String KEY_OMITTED_HEADER = "otl-key-omitted";
  public static final String HEADERS_OMITTED_HEADER = "otl-headers-omitted";

  /** Writes a session's inputs; {@link DataCollector#submit} in production. */
  @FunctionalInterface
  public interface Recorder {
    CompletionStage<AgentSession.RecordReply> submit(String sessionId, String agentId, List<SessionInput> inputs);
  }

  private final KafkaSettings settings;
  private final Recorder recorder;
  private final SessionLanes<Pending> lanes;
  private final LongAdder timeoutRetries = new LongAdder();
  private final LongAdder batches = new LongAdder();
  private final LongAdder writes = new LongAdder();
  private final LongAdder written = new LongAdder();
  private final LongAdder writeNanos = new LongAdder();
  private final LongAdder waitNanos = new LongAdder();
  private final LongAdder inWriteNanos = new LongAdder();
  /** The running attempt's window (a restart starts with an empty one). */
  private volatile RecordWindow window;
  private final ActorSystem<?> system;
  private final SendProducer<byte[], byte[]> deadLetterProducer;
  private final LongAdder recorded = new LongAdder();
  private final LongAdder duplicates = new LongAdder();
  private final LongAdder deadLettered = new LongAdder();
  private final Map<String, LongAdder> deadLetteredByCode = new ConcurrentHashMap<>();
  private final AtomicLong attempts = new AtomicLong();
  /** The input and dead-letter topics exist, asked before consuming (a missing dead-letter topic stalled at the first bad record). */
  private final KafkaTopicCheck topics;
  private final java.util.concurrent.atomic.AtomicReference<CompletionStage<Done>> stopped =
      new java.util.concurrent.atomic.AtomicReference<>();
  private volatile UniqueKillSwitch killSwitch;
  private volatile CompletionStage<Done> done;
  /** The running consumer's control, for a stop that drains (null until the topics are checked). */
  private final java.util.concurrent.atomic.AtomicReference<Consumer.Control> consumer =
      new java.util.concurrent.atomic.AtomicReference<>();

  private KafkaIngest(ActorSystem<?> system, Recorder recorder, KafkaSettings settings) {
    this.system = system;
    this.recorder = recorder;
    this.settings = settings;
    this.lanes = new SessionLanes<>(settings.parallelism(), MAX_RECORDS_PER_WRITE, (sessionId, pending) ->
        writeSession(pending));
    ProducerSettings<byte[], byte[]> producerSettings =
        ProducerSettings.create(system, new ByteArraySerializer(), new ByteArraySerializer())
            .withBootstrapServers(settings.bootstrapServers())
            .withProperties(settings.client());
    this.deadLetterProducer = new SendProducer<>(producerSettings, system);
    Map<String, String> topicKeys = new LinkedHashMap<>();
    topicKeys.put(settings.topics().agentEvents(), "kafka.topics.agent-events");
    topicKeys.put(settings.topics().deadLetter(), "kafka.topics.dead-letter");
    this.topics = new KafkaTopicCheck(system, settings, topicKeys, "ingestion starts once it exists",
        settings.topics().agentEvents() + " is not consumed", log);
  }

  /**
   * Starts consuming {@code topics.agent-events} in the background and returns at once (the broker
   * need not be reachable). Stops with the actor system (CoordinatedShutdown) or {@link #stop()}.
   */
  public static KafkaIngest start(ActorSystem<?> system, DataCollector collector, KafkaSettings settings) {
    return start(system, (sessionId, agentId, inputs) -> collector.submit(sessionId, agentId, inputs, WRITE_TIMEOUT),
        settings);
  }

  /** As {@link #start(ActorSystem, DataCollector, KafkaSettings)} with any recorder (tests, tools). */
  public static KafkaIngest start(ActorSystem<?> system, Recorder recorder, KafkaSettings settings) {
    KafkaIngest ingest = new KafkaIngest(system, recorder, settings);
    ingest.run();
    CoordinatedShutdown.get(system).addTask(CoordinatedShutdown.PhaseServiceStop(), "kafka-ingest-stop",
        ingest::stop);
    return ingest;
  }

  private void run() {
    RestartSettings restart = RestartSettings.create(settings.restartMinBackoff(), settings.restartMaxBackoff(), 0.2);
    Pair<UniqueKillSwitch, CompletionStage<Done>> running =
        RestartSource.onFailuresWithBackoff(RestartLogging.quiet(restart),
                () -> RestartLogging.told(attempt(), log, "Kafka ingestion of topic " + settings.topics().agentEvents()))
            .viaMat(KillSwitches.single(), Keep.right())
            .toMat(Sink.ignore(), Keep.both())
            .run(system);
    killSwitch = running.first();
    done = running.second();
    log.info("Kafka ingestion of topic {} started ({})", settings.topics().agentEvents(), settings);
  }

  /** One run of the consumer, from the last committed offset. */
  private Source<Done, NotUsed> attempt() {
    // A stop during a restart's back-off: a new consumer would join the group, poll and start writes that
    // the stop's kill switch then cuts, records read again by the next consumer.
    if (stopped.get() != null) return Source.empty();
    long n = attempts.incrementAndGet();
    if (n > 1) log.warn("Kafka ingestion restarts (attempt {}) from the last committed offset", n);
    ConsumerSettings<byte[], byte[]> consumerSettings =
        ConsumerSettings.create(system, new ByteArrayDeserializer(), new ByteArrayDeserializer())
            .withBootstrapServers(settings.bootstrapServers())
            .withGroupId(settings.groupId())
            .withProperty(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest")
            .withProperty(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, String.valueOf(settings.ingestBatchSize()))
            .withProperty(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, String.valueOf(settings.sessionTimeout().toMillis()))
            // A third of the session, as Kafka advises: three heartbeats may go missing first.
            .withProperty(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG,
                String.valueOf(Math.max(1000, settings.sessionTimeout().toMillis() / 3)))
            // What a transactional producer aborted was never sent: Kafka's default read_uncommitted
            // stored it as a session event like any other (trial t72). kafka.client may still override.
            .withProperty(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed")
            .withProperties(settings.client())
            // No delay of its own: stop() drains the stream before it shuts the consumer down.
            .withStopTimeout(Duration.ZERO);
    if (!settings.groupInstanceId().isEmpty()) {
      // Static membership: a restart of this node within the session timeout resumes its partitions
      // without a rebalance (issue #22: after a kill -9 the group waited out the dead member's session).
      consumerSettings = consumerSettings.withProperty(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, settings.groupInstanceId());
    }
    CommitterSettings committerSettings = CommitterSettings.create(system)
        .withMaxBatch(settings.commitMaxBatch())
        .withMaxInterval(settings.commitMaxInterval());
    ConsumerSettings<byte[], byte[]> consumer = consumerSettings;
    RecordWindow attemptWindow = new RecordWindow((long) WINDOW_BATCHES * settings.ingestBatchSize());
    this.window = attemptWindow;
    return Source.completionStage(topics.run())
        .flatMapConcat(ok -> Consumer.committableSource(consumer, Subscriptions.topics(settings.topics().agentEvents()))
            .mapMaterializedValue(control -> {
              this.consumer.set(control);
              // A failed attempt's control is not drained by a stop: it has nothing in flight.
              control.isShutdown().thenRun(() -> this.consumer.compareAndSet(control, null));
              return control;
            })
            .groupedWithin(settings.ingestBatchSize(), settings.ingestBatchWindow())
            // Admitted one batch at a time, in order, so lanes get records in topic order.
            .mapAsync(1, batch -> {
              long arrivedAt = System.nanoTime();
              return attemptWindow.acquire(batch.size()).thenApply(d -> Pair.create(batch, arrivedAt));
            })
            .mapAsync(MAX_BATCHES_IN_FLIGHT, polled -> process(polled.first(), polled.second())
                .whenComplete((offsets, e) -> attemptWindow.release(polled.first().size())))
            .mapConcat(offsets -> offsets)
            .via(Committer.flow(committerSettings)))
        .mapMaterializedValue(control -> NotUsed.getInstance());
  }

  /** A record to write, with the dead letters of its batch (a write may hold records of several). */
  private record Pending(ConsumerRecord<byte[], byte[]> record, AgentEventRecord.Event event, List<DeadLetter> dead,
      long arrivedAt) {}

  private record DeadLetter(ConsumerRecord<byte[], byte[]> record, String code, String reason) {}

  /** Records a batch; completes with its offsets once every record is in the journal or the DLQ. */
  private CompletionStage<List<ConsumerMessage.CommittableOffset>> process(
      List<ConsumerMessage.CommittableMessage<byte[], byte[]>> batch, long arrivedAt) {
    batches.increment();
    List<DeadLetter> dead = Collections.synchronizedList(new ArrayList<>());
    Map<String, List<Pending>> bySession = new LinkedHashMap<>();
    List<ConsumerMessage.CommittableOffset> offsets = new ArrayList<>(batch.size());
    for (ConsumerMessage.CommittableMessage<byte[], byte[]> m : batch) {
      offsets.add(m.committableOffset());
      ConsumerRecord<byte[], byte[]> r = m.record();
      // The key is read as bytes so that a dead letter carries it as sent; a key that is not UTF-8
      // decodes with U+FFFD, which no session id holds, and is refused as such.
      String key = r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8);
      AgentEventRecord parsed = AgentEventRecord.parse(key, r.value());
      if (parsed instanceof AgentEventRecord.Invalid invalid) {
        dead.add(new DeadLetter(r, invalid.code(), invalid.reason()));
      } else {
        AgentEventRecord.Event event = (AgentEventRecord.Event) parsed;
        bySession.computeIfAbsent(event.sessionId(), s -> new ArrayList<>()).add(new Pending(r, event, dead, arrivedAt));
      }
    }
    // Every session of the batch is queued now, before the next batch queues any (mapAsync calls
    // this in topic order): that keeps each session's records in order across batches in flight.
    CompletableFuture<?>[] writes = new CompletableFuture<?>[bySession.size()];
    int i = 0;
    for (Map.Entry<String, List<Pending>> e : bySession.entrySet()) {
      writes[i++] = lanes.add(e.getKey(), e.getValue()).toCompletableFuture();
    }
    return CompletableFuture.allOf(writes)
        .thenCompose(d -> sendDeadLetters(dead))
        .thenApply(d -> offsets);
  }

  /** Writes one session's records in order: runs of the same agentId as one write each. */
  private CompletionStage<Done> writeSession(List<Pending> pending) {
    CompletionStage<Done> chain = CompletableFuture.completedFuture(Done.getInstance());
    int from = 0;
    while (from < pending.size()) {
      String agentId = pending.get(from).event().agentId();
      int to = from + 1;
      while (to < pending.size() && pending.get(to).event().agentId().equals(agentId)) to++;
      List<Pending> run = pending.subList(from, to);
      chain = chain.thenCompose(d -> write(run));
      from = to;
    }
    return chain;
  }

  private CompletionStage<Done> write(List<Pending> run) {
    AgentEventRecord.Event first = run.get(0).event();
    List<SessionInput> inputs = new ArrayList<>(run.size());
    for (Pending p : run) inputs.add(p.event().input());
    long startedAt = System.nanoTime();
    return submitRetryingTimeouts(first.sessionId(), first.agentId(), inputs).thenCompose(reply -> {
      // A refused write of several is written again one record at a time: counted there, not twice.
      if (reply instanceof AgentSession.Recorded || run.size() == 1) count(run, startedAt);
      if (reply instanceof AgentSession.Recorded r) {
        // Stored and duplicate apart, as the events API counts them: a redelivery after a crash
        // (or a producer's retry) was counted as stored again, so the figure overstated the journal.
        recorded.add(r.accepted());
        duplicates.add(r.duplicates());
        return CompletableFuture.completedFuture(Done.getInstance());
      }
      AgentSession.Rejected rejected = (AgentSession.Rejected) reply;
      if (run.size() == 1) {
        Pending p = run.get(0);
        p.dead().add(new DeadLetter(p.record(), rejectionCode(rejected.code()), recordReason(rejected)));
        return CompletableFuture.completedFuture(Done.getInstance());
      }
      // One of them is refused and the write was atomic: find which, one record at a time.
      CompletionStage<Done> oneByOne = CompletableFuture.completedFuture(Done.getInstance());
      for (Pending p : run) oneByOne = oneByOne.thenCompose(d -> write(List.of(p)));
      return oneByOne;
    });
  }

  private void count(List<Pending> run, long startedAt) {
    long now = System.nanoTime();
    long waited = 0;
    for (Pending p : run) waited += now - p.arrivedAt();
    writes.increment();
    writeNanos.add(now - startedAt);
    waitNanos.add(waited);
    inWriteNanos.add((now - startedAt) * run.size());
    written.add(run.size());
  }

  /**
   * The session's refusal as the reason of one record: the session names the field as in an HTTP
   * batch ({@code events[0].content is … long}), a record is one event, so the field is {@code
   * value.content} as in the refusals of {@link AgentEventRecord#parse}; the message already names
   * it (it used to be written twice: {@code events[0].content: events[0].content is …}).
   */
  static String recordReason(AgentSession.Rejected rejected) {
    String field = rejected.field() == null ? "" : rejected.field();
    String described = rejected.describe();
    return field.isEmpty() ? described : recordField(field) + described.substring(field.length());
  }

  /**
   * A field of an HTTP batch as a record names it: {@code events[0].msgId} is {@code value.msgId},
   * {@code events[0]} the value itself, and the body's {@code agentId} (a session of another agent)
   * {@code value.agentId}, as in {@link AgentEventRecord#parse}'s refusals.
   */
  private static String recordField(String field) {
    if (field.startsWith("events[0]")) return "value" + field.substring("events[0]".length());
    if (field.equals("events")) return "value";
    return "value." + field;
  }

  /** {@code recorder.submit}, sent again when it times out, up to {@link #TIMEOUT_RETRIES} times. */
  private CompletionStage<AgentSession.RecordReply> submitRetryingTimeouts(String sessionId, String agentId,
      List<SessionInput> inputs) {
    return io.otl.core.RetryOnTimeout.call(() -> recorder.submit(sessionId, agentId, inputs), TIMEOUT_RETRIES,
        TIMEOUT_RETRY_PAUSE_MS, retry -> {
          timeoutRetries.increment();
          if (retry == 1) log.info("journal write of session {} timed out; sending it again", sessionId);
        });
  }

  /** Records admitted to be written and not yet in the journal or the dead-letter topic (its window). */
  long recordsInFlight() {
    RecordWindow w = window;
    return w == null ? 0 : w.held();
  }

  /**
   * Counters of the ingestion since start, on the node's /metrics (otl_kafka_*, docs/api.md) and read by the
   * benchmarks (BENCHMARKS.md, session 43): batches
   * taken, session writes answered and the records in them, the writes' summed latency, each
   * record's summed wait from its batch's arrival at the window to its write's answer and the part of it in the
   * write; and, now, the writes running, the sessions queued or writing, the records held; and the
   * timed-out writes sent again.
   */
  public record Stats(long batches, long writes, long records, long writeNanos, long recordWaitNanos,
      long recordInWriteNanos, int writesRunning, int sessionsBusy, long recordsHeld, long timeoutRetries) {}

  public Stats stats() {
    return new Stats(batches.sum(), writes.sum(), written.sum(), writeNanos.sum(), waitNanos.sum(), inWriteNanos.sum(),
        lanes.running(), lanes.busy(), recordsInFlight(), timeoutRetries());
  }

  /** Timed-out writes sent again in place since start. */
  public long timeoutRetries() {
    return timeoutRetries.sum();
  }

  /** The {@code otl-error-code} of a session's refusal: {@code invalid}, {@code conflict}, {@code not_found}. */
  public static String rejectionCode(AgentSession.RejectionCode code) {
    return code.name().toLowerCase(Locale.ROOT);
  }

  private CompletionStage<Done> sendDeadLetters(List<DeadLetter> dead) {
    if (dead.isEmpty()) return CompletableFuture.completedFuture(Done.getInstance());
    List<CompletableFuture<?>> sends = new ArrayList<>(dead.size());
    synchronized (dead) {
      for (DeadLetter d : dead) {
        log.info("dead-lettering {}/{}/{}: {} ({})", d.record().topic(), d.record().partition(), d.record().offset(),
            d.code(), d.reason());
        sends.add(sendDeadLetter(d, Omitted.NOTHING).toCompletableFuture());
      }
    }
    return CompletableFuture.allOf(sends.toArray(CompletableFuture[]::new)).thenApply(v -> {
      deadLettered.add(dead.size());
      for (DeadLetter d : dead) deadLetteredByCode.computeIfAbsent(d.code(), c -> new LongAdder()).increment();
      return Done.getInstance();
    });
  }

  /** What a dead letter leaves out to fit the record size limit; each step leaves out more. */
  private enum Omitted {
    NOTHING, VALUE, KEY_VALUE_AND_HEADERS;

    Omitted next() {
      return values()[ordinal() + 1];
    }
  }

  /**
   * Sends the dead letter of {@code d} leaving out {@code omitted}; a letter over the record size
   * limit is sent again leaving out more. A record near the broker's size limit does not fit again
   * with our headers added: it was refused on every restart of the stream, and the partition stood
   * still behind it. Its size may be in the value (sent without it) or in its key or headers (trial
   * t53: a 1 MB header stalled the partition just the same; then only our headers go).
   */
  private CompletionStage<org.apache.kafka.clients.producer.RecordMetadata> sendDeadLetter(DeadLetter d,
      Omitted omitted) {
    return deadLetterProducer.send(deadLetter(d, omitted)).toCompletableFuture().exceptionallyCompose(e -> {
      if (!tooLarge(e) || omitted == Omitted.KEY_VALUE_AND_HEADERS) {
        // The stream restarts and reads this record again: ask the broker first whether the
        // dead-letter topic is still there, so a deleted one is named and waited for.
        topics.askAgain();
        return CompletableFuture.failedFuture(e);
      }
      Omitted more = omitted.next();
      log.warn("dead letter of {}/{}/{} is over the record size limit; sent without its {} (value {} bytes, key {} bytes,"
              + " headers {} bytes)", d.record().topic(), d.record().partition(), d.record().offset(),
          more == Omitted.VALUE ? "value" : "key, value and headers", valueSize(d.record()), keySize(d.record()),
          headersSize(d.record()));
      return sendDeadLetter(d, more).toCompletableFuture();
    });
  }

  /**
   * The dead letter of {@code d}: its key, value and headers as sent, plus ours, leaving out {@code
   * omitted}: what is left out is said by {@link #VALUE_OMITTED_HEADER} (the value's size),
   * {@link #KEY_OMITTED_HEADER} and {@link #HEADERS_OMITTED_HEADER}; the record stays at {@code
   * otl-source} in the input topic for the input's retention.
   */
  private ProducerRecord<byte[], byte[]> deadLetter(DeadLetter d, Omitted omitted) {
    boolean bare = omitted == Omitted.KEY_VALUE_AND_HEADERS;
    RecordHeaders headers = bare ? new RecordHeaders() : new RecordHeaders(d.record().headers().toArray());
    headers.add(ERROR_HEADER, d.reason().getBytes(StandardCharsets.UTF_8));
    headers.add(ERROR_CODE_HEADER, d.code().getBytes(StandardCharsets.UTF_8));
    headers.add(SOURCE_HEADER, (d.record().topic() + "/" + d.record().partition() + "/" + d.record().offset())
        .getBytes(StandardCharsets.UTF_8));
    if (omitted != Omitted.NOTHING) {
      headers.add(VALUE_OMITTED_HEADER, String.valueOf(valueSize(d.record())).getBytes(StandardCharsets.UTF_8));
    }
    if (bare) {
      headers.add(KEY_OMITTED_HEADER, String.valueOf(keySize(d.record())).getBytes(StandardCharsets.UTF_8));
      headers.add(HEADERS_OMITTED_HEADER, String.valueOf(headersSize(d.record())).getBytes(StandardCharsets.UTF_8));
    }
    return new ProducerRecord<>(settings.topics().deadLetter(), null, bare ? null : d.record().key(),
        omitted == Omitted.NOTHING ? d.record().value() : null, headers);
  }

  private static int keySize(ConsumerRecord<byte[], byte[]> r) {
    return r.key() == null ? 0 : r.key().length;
  }

  /** The producer's headers, names and values, in bytes. */
  private static long headersSize(ConsumerRecord<byte[], byte[]> r) {
    long n = 0;
    for (org.apache.kafka.common.header.Header h : r.headers()) {
      n += h.key().getBytes(StandardCharsets.UTF_8).length + (h.value() == null ? 0 : h.value().length);
    }
    return n;
  }

  private static int valueSize(ConsumerRecord<byte[], byte[]> r) {
    return r.value() == null ? 0 : r.value().length;
  }

  private static boolean tooLarge(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof org.apache.kafka.common.errors.RecordTooLargeException) return true;
    }
    return false;
  }

  /** Records stored in the journal since start (not their duplicates: {@link #duplicates()}). */
  public long recorded() {
    return recorded.sum();
  }

  /** Records the journal acknowledged as duplicates of stored events (same eventId) since start. */
  public long duplicates() {
    return duplicates.sum();
  }

  /** Records written to the dead-letter topic since start. */
  public long deadLettered() {
    return deadLettered.sum();
  }

  /** Dead-lettered records by {@code otl-error-code}, for a labelled counter. */
  public Map<String, Long> deadLetteredByCode() {
    Map<String, Long> out = new LinkedHashMap<>();
    deadLetteredByCode.forEach((code, n) -> out.put(code, n.sum()));
    return out;
  }

  /** How often the topics were looked up on the broker (an Admin client each time). */
  long topicChecks() {
    return topics.checks();
  }

  /** How often the consumer stream restarted after a failure. */
  public long restarts() {
    return Math.max(0, attempts.get() - 1);
  }

  /** Completes when the ingestion has stopped. */
  public CompletionStage<Done> whenStopped() {
    return done;
  }

  /**
   * Stops polling, lets the batches in flight finish and commits their offsets, for up to {@link
   * #DRAIN_TIMEOUT}; then closes the consumer. Cut at once, as it used to be, the writes in flight kept
   * retrying against sharding regions that were shutting down (hundreds of "timed out; sending it
   * again" lines and a 14 s stop under a backlog) and their records were read again by the next
   * consumer (trial t105: 1,131 of 12,000). What the drain does not finish is read again, as before.
   */
  public CompletionStage<Done> stop() {
    CompletableFuture<Done> mine = new CompletableFuture<>();
    if (!stopped.compareAndSet(null, mine)) return stopped.get();
    Consumer.Control control = consumer.get();
    // No running consumer (checking the topics, or backing off after a failure): nothing in flight.
    CompletableFuture<Done> drained = control == null
        ? CompletableFuture.completedFuture(Done.getInstance())
        : control.stop().thenCompose(d -> done).toCompletableFuture()
            .exceptionally(e -> Done.getInstance())
            .completeOnTimeout(null, DRAIN_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS); // null: out of time
    drained.thenCompose(d -> {
          if (d == null) {
            log.info("Kafka ingestion stops without waiting longer: its writes in flight did not finish within {} ms;"
                + " their records are read again by the next consumer of group {}", DRAIN_TIMEOUT.toMillis(), settings.groupId());
          }
          killSwitch.shutdown(); // a stream the drain did not end (still checking topics, or out of time)
          return control == null ? done : control.shutdown().thenCompose(c -> done);
        })
        .exceptionally(e -> Done.getInstance())
        .thenCompose(d -> deadLetterProducer.close())
        .exceptionally(e -> Done.getInstance())
        .whenComplete((d, e) -> mine.complete(Done.getInstance()));
    return mine;
  }
}
