package io.otl.persistence.kafka;

import io.otl.core.JsonSerializable;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.AgentSession;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.pekko.Done;
import org.apache.pekko.NotUsed;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.PostStop;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.typed.ClusterSingleton;
import org.apache.pekko.cluster.typed.SingletonActor;
import org.apache.pekko.kafka.ProducerMessage;
import org.apache.pekko.kafka.ProducerSettings;
import org.apache.pekko.kafka.javadsl.Producer;
import org.apache.pekko.persistence.jdbc.query.javadsl.JdbcReadJournal;
import org.apache.pekko.persistence.query.EventEnvelope;
import org.apache.pekko.persistence.query.Offset;
import org.apache.pekko.persistence.query.PersistenceQuery;
import org.apache.pekko.persistence.query.Sequence;
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
 * Publishes tagged journal events to Kafka (design §7.2): {@code trajectories} from the sessions'
 * completions and reward revisions, {@code model-updates} from ModelVersion transitions.
 *
 * <p>Each publisher is a cluster singleton that reads its tag with {@code eventsByTag} from the
 * offset stored in its {@link KafkaPublisherOffset} (in the journal, persistence id {@code
 * KafkaOffset|<topic>}), and stores a new offset only after the broker acknowledged every record
 * up to it. A crash or a broker outage therefore never loses a record; it may publish a record
 * again (at-least-once), with the same {@code id}, for consumers to deduplicate. Failures restart
 * the stream with back-off from the stored offset; start-up never waits for the broker.
 *
 * <p>Caveat (design §10): on PostgreSQL, {@code eventsByTag} may skip an event whose transaction
 * committed more than about 10 s after a later one.
 */
public final class KafkaPublisher {
  private static final Logger log = LoggerFactory.getLogger(KafkaPublisher.class);
  private static final Duration OFFSET_TIMEOUT = Duration.ofSeconds(10);

  private KafkaPublisher() {}

  /** Messages of the singleton actor. */
  public sealed interface Command extends JsonSerializable {}

  /** Sent by the singleton manager at hand-over and shutdown. */
  public record Stop() implements Command {}

  /** Turns one tagged event into the record to publish, or none. */
  @FunctionalInterface
  interface RecordBuilder {
    CompletionStage<Optional<ProducerRecord<String, String>>> build(EventEnvelope envelope);

    /**
     * {@code record}, which is {@code bytes} long and over the producer's {@code max.request.size},
     * made to fit by leaving out its bulk; as it is when there is nothing to leave out (the send then
     * fails and the stream restarts, as for any record the broker does not take).
     */
    default ProducerRecord<String, String> fitted(ProducerRecord<String, String> record, long bytes, long limit) {
      return record;
    }
  }

  /** The producer's default {@code max.request.size}. */
  static final long DEFAULT_MAX_REQUEST_SIZE = 1_048_576;
  /**
   * Room for what the producer adds to key and value before it compares with {@code max.request.size}
   * (the record batch header and the record's own length fields: under 100 bytes).
   */
  static final long RECORD_OVERHEAD = 512;

  /**
   * Starts (or joins) the cluster singleton publishing {@code topics.trajectories}: one record per
   * TrajectoryCompleted and RewardRevised (tag {@value AgentSession#TRAJECTORY_TAG}), key =
   * sessionId. Returns the singleton's proxy.
   */
  public static ActorRef<Command> startTrajectories(ActorSystem<?> system, KafkaSettings settings) {
    String topic = settings.topics().trajectories();
    return start(system, settings, "kafka-publisher-" + topic, AgentSession.TRAJECTORY_TAG,
        new Topic(topic, "kafka.topics.trajectories"), 4,
        journal -> () -> new TrajectoryRecords(system, journal, topic));
  }

  /**
   * Starts (or joins) the cluster singleton publishing {@code topics.model-updates}: one record per
   * ModelVersion transition (tag {@value ModelVersion#TRANSITIONS_TAG}) with the routing table
   * after it, key = agentId. Returns the singleton's proxy.
   */
  public static ActorRef<Command> startModelUpdates(ActorSystem<?> system, KafkaSettings settings) {
    String topic = settings.topics().modelUpdates();
    return start(system, settings, "kafka-publisher-" + topic, ModelVersion.TRANSITIONS_TAG,
        new Topic(topic, "kafka.topics.model-updates"), 1,
        journal -> () -> new ModelUpdateRecords(system, journal, topic));
  }

  private interface Builders {
    Supplier<RecordBuilder> with(JdbcReadJournal journal);
  }

  /** A topic a publisher writes, and the key that names it. */
  private record Topic(String name, String key) {}

  private static ActorRef<Command> start(ActorSystem<?> system, KafkaSettings settings, String name, String tag,
      Topic published, int parallelism, Builders builders) {
    String topic = published.name();
    Behavior<Command> behavior = Behaviors.setup(ctx -> {
      JdbcReadJournal journal = PersistenceQuery.get(system).getReadJournalFor(JdbcReadJournal.class,
          JdbcReadJournal.Identifier());
      ActorRef<KafkaPublisherOffset.Command> offsets = ctx.spawn(KafkaPublisherOffset.create(topic), "offset");
      UniqueKillSwitch killSwitch = run(ctx.getSystem(), settings, tag, published, parallelism, journal, offsets,
          builders.with(journal));
      log.info("publishing tag {} to Kafka topic {} ({})", tag, topic, settings);
      return Behaviors.receive(Command.class)
          .onMessage(Stop.class, s -> Behaviors.stopped())
          .onSignal(PostStop.class, s -> {
            killSwitch.shutdown();
            return Behaviors.same();
          })
          .build();
    });
    return ClusterSingleton.get(system).init(SingletonActor.of(behavior, name).withStopMessage(new Stop()));
  }

  private static UniqueKillSwitch run(ActorSystem<?> system, KafkaSettings settings, String tag, Topic published,
      int parallelism, JdbcReadJournal journal, ActorRef<KafkaPublisherOffset.Command> offsets,
      Supplier<RecordBuilder> builders) {
    ProducerSettings<String, String> producerSettings =
        ProducerSettings.create(system, new StringSerializer(), new StringSerializer())
            .withBootstrapServers(settings.bootstrapServers())
            .withProperties(settings.client());
    long maxRequestSize = maxRequestSize(settings);
    RestartSettings restart = RestartSettings.create(settings.restartMinBackoff(), settings.restartMaxBackoff(), 0.2);
    // A missing topic was only the producer's warnings each second and, a minute later, a restart
    // naming no key (trial t16); now it is named with its key, and publishing starts once it exists.
    String topic = published.name();
    KafkaTopicCheck topicExists = new KafkaTopicCheck(system, settings, Map.of(topic, published.key()),
        "publishing starts once it exists", topic + " is not published", log);
    Supplier<Source<Done, NotUsed>> attempt = () -> {
      RecordBuilder builder = builders.get();
      return Source.completionStage(topicExists.run())
          .flatMapConcat(ok -> Source.completionStage(AskPattern.ask(offsets, KafkaPublisherOffset.Get::new,
              OFFSET_TIMEOUT, system.scheduler())))
          .flatMapConcat(current -> {
            log.info("publisher of {} resumes after journal offset {}", topic, current.offset());
            return journal.eventsByTag(tag, Offset.sequence(current.offset()));
          })
          .mapAsync(parallelism, env -> builder.build(env)
              .thenApply(record -> envelope(record.map(r -> fitted(builder, r, maxRequestSize)), env)))
          .via(Producer.flexiFlow(producerSettings))
          .map(ProducerMessage.Results::passThrough)
          .groupedWithin(settings.publishOffsetBatch(), settings.publishOffsetInterval())
          .mapAsync(1, (List<Long> acked) -> AskPattern.<KafkaPublisherOffset.Command, Done>ask(offsets,
              reply -> new KafkaPublisherOffset.Store(acked.get(acked.size() - 1), reply), OFFSET_TIMEOUT,
              system.scheduler()))
          // A failed attempt (a send the broker did not take: the topic deleted under the node, trial
          // t36) asks the broker again on the next one, which names a missing topic instead of
          // sending into it blind every two minutes.
          .watchTermination((mat, finished) -> {
            finished.whenComplete((d, failure) -> {
              if (failure != null) topicExists.askAgain();
            });
            return mat;
          });
    };
    return RestartSource.onFailuresWithBackoff(RestartLogging.quiet(restart),
            () -> RestartLogging.told(attempt.get(), log, "the publisher of " + topic))
        .viaMat(KillSwitches.single(), Keep.right())
        .to(Sink.ignore())
        .run(system);
  }

  /**
   * A record over the producer's size limit was refused on every restart of the stream, and every
   * later one waited behind it for good (trial t64: a trajectory of twenty 60,000-character turns,
   * each accepted, held the {@code trajectories} topic still). It is made to fit instead.
   */
  private static ProducerRecord<String, String> fitted(RecordBuilder builder, ProducerRecord<String, String> record,
      long maxRequestSize) {
    long bytes = utf8Length(record.key()) + utf8Length(record.value());
    return bytes + RECORD_OVERHEAD > maxRequestSize ? builder.fitted(record, bytes, maxRequestSize - RECORD_OVERHEAD)
        : record;
  }

  static long utf8Length(String s) {
    return s == null ? 0 : s.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
  }

  private static long maxRequestSize(KafkaSettings settings) {
    String set = settings.client().get("max.request.size");
    try {
      return set == null ? DEFAULT_MAX_REQUEST_SIZE : Long.parseLong(set.trim());
    } catch (NumberFormatException e) {
      return DEFAULT_MAX_REQUEST_SIZE; // the producer itself refuses it at start, naming the key
    }
  }

  private static ProducerMessage.Envelope<String, String, Long> envelope(
      Optional<ProducerRecord<String, String>> record, EventEnvelope env) {
    long offset = ((Sequence) env.offset()).value();
    return record.isPresent()
        ? ProducerMessage.single(record.get(), offset)
        : ProducerMessage.passThrough(offset);
  }
}
