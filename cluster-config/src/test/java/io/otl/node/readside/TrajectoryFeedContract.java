package io.otl.node.readside;

import static io.otl.node.readside.FeedTestSupport.await;
import static io.otl.node.readside.FeedTestSupport.completedSessions;
import static io.otl.node.readside.FeedTestSupport.execute;
import static io.otl.node.readside.FeedTestSupport.queryLong;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.api.DataCollector;
import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.JournalSettings;
import io.otl.persistence.readside.FeedOffsetStore;
import io.otl.persistence.readside.FeedSettings;
import io.otl.persistence.readside.TaggedEventFeed;
import io.otl.persistence.readside.TrajectoryFeed;
import io.otl.persistence.readside.TrajectoryNotice;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.AskPattern;
import org.junit.jupiter.api.Test;

/** The trajectory feed on the real journal, run once per database. */
abstract class TrajectoryFeedContract {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final String MAX_TAGGED = "SELECT MAX(event_id) FROM event_tag WHERE tag = 'trajectory'";

  /** Node overrides selecting this contract's database; a fresh, empty journal each call. */
  protected abstract Config database() throws Exception;

  private static FeedSettings settings(Duration rescanInterval) {
    return FeedSettings.defaults()
        .withBatching(5, Duration.ofMillis(200))
        .withRescan(Duration.ofMinutes(5), rescanInterval)
        .withBackoff(Duration.ofMillis(200), Duration.ofSeconds(2));
  }

  /**
   * Sessions completing at once put their untagged events and their tagged completions into the
   * same journal write batches; each tag row must name its own completion's ordering (on PostgreSQL
   * such batches are written by TaggedBatchJournalDao, on H2 by the stock DAO).
   */
  @Test
  void concurrentCompletionsTagTheirOwnRows() throws Exception {
    try (TrainingNode n = TrainingNode.start(TestDatabases.node(database(), false))) {
      List<String> ids = completedSessions(n.dataCollector(), "mixed", "agent-a", 96);
      String tagged = "FROM event_tag t JOIN event_journal j ON j.ordering = t.event_id WHERE t.tag = 'trajectory'";
      assertEquals(0, queryLong(n.journal(), "SELECT COUNT(*) FROM event_tag t LEFT JOIN event_journal j "
          + "ON j.ordering = t.event_id WHERE j.ordering IS NULL"), "no tag row without its journal row");
      assertEquals(ids.size(), queryLong(n.journal(), "SELECT COUNT(*) " + tagged
          + " AND j.event_ser_manifest LIKE 'session.trajectory-completed#%'"), "one tag per completion");
      assertEquals(ids.size(), queryLong(n.journal(), "SELECT COUNT(DISTINCT j.persistence_id) " + tagged));
      assertEquals(0, queryLong(n.journal(), "SELECT COUNT(*) " + tagged
          + " AND j.event_ser_manifest NOT LIKE 'session.trajectory-completed#%'"), "no tag on another event");
    }
  }

  /**
   * A consumer that takes its time (the coordinator's journal write) gets what waited meanwhile in
   * one call: with 8 deliveries in flight the first notices of a poll went one by one, each a write
   * the one coordinator made in turn, and it trailed the sessions by seconds under load (W1).
   */
  @Test
  void aSlowConsumerGetsWhatWaitedInOneCall() throws Exception {
    try (TrainingNode n = TrainingNode.start(TestDatabases.node(database(), false))) {
      List<String> ids = completedSessions(n.dataCollector(), "waiting", "agent-a", 40);
      java.util.Queue<Integer> calls = new java.util.concurrent.ConcurrentLinkedQueue<>();
      RecordingSink sink = new RecordingSink() {
        @Override
        public java.util.concurrent.CompletionStage<Void> deliverAll(List<TrajectoryNotice> notices) {
          calls.add(notices.size());
          notices.forEach(this::deliver);
          return java.util.concurrent.CompletableFuture.runAsync(() -> { },
              java.util.concurrent.CompletableFuture.delayedExecutor(300, TimeUnit.MILLISECONDS));
        }
      };
      TrajectoryFeed.start(n.system(), "slow", sink, settings(Duration.ofHours(1)));
      await("40 completions", WAIT, () -> sink.completedSessions().size() == 40);
      assertEquals(new HashSet<>(ids), sink.completedSessions());
      // Each poll of the journal gives at most two calls (its first notice alone, the rest together), and
      // the 40 arrive in one to three polls; with 8 in flight a poll's first 8 went alone (17 calls seen).
      assertTrue(calls.size() < 8, "40 completions waiting in the journal reached a slow consumer in "
          + calls.size() + " calls " + calls + "; expected the first of a poll alone and its rest together");
    }
  }

  @Test
  void deliversEveryCompletionOnceAcrossANodeRestartAndResumesFromTheStoredOffset() throws Exception {
    Config node = TestDatabases.node(database(), false);
    FeedSettings settings = settings(Duration.ofHours(1)); // no reconciliation: the live stream alone
    RecordingSink before = new RecordingSink();
    long storedBeforeStop;
    try (TrainingNode n = TrainingNode.start(node)) {
      TrajectoryFeed.start(n.system(), "coordinator", before, settings);
      DataCollector dc = n.dataCollector();
      List<String> first = completedSessions(dc, "first", "agent-a", 20);
      FeedTestSupport.session(dc, "open-1", "agent-a", "q", "a", null).toCompletableFuture().get(30, TimeUnit.SECONDS);
      // late feedback on completed sessions: reward revisions
      for (int i = 0; i < 3; i++) {
        dc.feedback("first-" + i, "agent-a", "THUMBS_DOWN", null, "late-" + i).toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
      }
      await("20 completions and 3 revisions", WAIT,
          () -> before.completedSessions().size() == 20 && before.revisions() == 3);
      assertEquals(new HashSet<>(first), before.completedSessions());
      assertFalse(before.completedSessions().contains("open-1"), "an open session is not a completion");
      TrajectoryNotice n0 = before.notices.get("first-0/completed");
      assertEquals("agent-a", n0.agentId());
      assertEquals("v1", n0.modelVersion());
      assertEquals(List.of("chatcmpl-first-0"), n0.msgIds());
      TrajectoryNotice revised = before.notices.values().stream()
          .filter(x -> x.revision() && x.sessionId().equals("first-0")).findFirst().orElseThrow();
      assertTrue(revised.reward() < n0.reward(), "thumbs down lowers the reward");
      assertTrue(revised.ordering() > n0.ordering());
      // the offset is stored in the journal, up to the last tagged event
      long maxTagged = queryLong(n.journal(), MAX_TAGGED);
      await("offset stored up to " + maxTagged, WAIT, () -> stored(n, "coordinator") == maxTagged);
      storedBeforeStop = maxTagged;
      assertEquals(23, before.deliveries.get(), "the live stream delivers each event once");
    }

    RecordingSink after = new RecordingSink();
    try (TrainingNode n = TrainingNode.start(node)) {
      TrajectoryFeed.start(n.system(), "coordinator", after, settings);
      List<String> second = completedSessions(n.dataCollector(), "second", "agent-a", 10);
      await("10 new completions", WAIT, () -> after.completedSessions().size() >= 10);
      // resumed after the stored offset: nothing from before the restart comes again
      assertEquals(new HashSet<>(second), after.completedSessions());
      assertTrue(after.notices.values().stream().allMatch(x -> x.ordering() > storedBeforeStop));
      Set<String> all = new HashSet<>(before.completedSessions());
      all.addAll(after.completedSessions());
      assertEquals(30, all.size(), "every completion counted exactly once across the restart");
      long maxTagged = queryLong(n.journal(), MAX_TAGGED);
      await("offset stored after the restart", WAIT, () -> stored(n, "coordinator") == maxTagged);
    }
  }

  @Test
  void reconciliationDeliversAnEventTheLiveStreamSkipped() throws Exception {
    // Give up on ordering gaps quickly, as the read journal does after ~10 s by default.
    Config node = TestDatabases.node(database(), false).withFallback(ConfigFactory.parseString(
        "jdbc-read-journal.journal-sequence-retrieval { max-tries = 2, query-delay = 200ms }"));
    RecordingSink sink = new RecordingSink();
    try (TrainingNode n = TrainingNode.start(node)) {
      TrajectoryFeed.start(n.system(), "late", sink, settings(Duration.ofSeconds(1)));
      DataCollector dc = n.dataCollector();
      completedSessions(dc, "early", "agent-a", 3);
      await("3 completions", WAIT, () -> sink.completedSessions().size() == 3);
      JournalSettings j = n.journal();
      long gapStart = queryLong(j, "SELECT MAX(ordering) FROM event_journal") + 1;
      skipOrderings(j, gapStart + 1000);
      completedSessions(dc, "after-gap", "agent-a", 3);
      await("the live stream passes the gap", WAIT, () -> sink.completedSessions().size() == 6);
      long passed = sink.notices.values().stream().mapToLong(TrajectoryNotice::ordering).max().orElseThrow();
      assertTrue(passed > gapStart + 500);

      // A transaction that took an ordering inside the gap commits only now.
      long lateOrdering = gapStart + 500;
      long template = queryLong(j, "SELECT MIN(event_id) FROM event_tag WHERE tag = 'trajectory'");
      execute(j,
          "INSERT INTO event_journal(ordering, persistence_id, sequence_number, deleted, writer, write_timestamp,"
              + " adapter_manifest, event_ser_id, event_ser_manifest, event_payload, meta_ser_id, meta_ser_manifest,"
              + " meta_payload) SELECT " + lateOrdering + ", 'AgentSession|late-1', 1, deleted, writer, write_timestamp,"
              + " adapter_manifest, event_ser_id, event_ser_manifest, event_payload, meta_ser_id, meta_ser_manifest,"
              + " meta_payload FROM event_journal WHERE ordering = " + template,
          "INSERT INTO event_tag(event_id, tag) VALUES (" + lateOrdering + ", 'trajectory')");

      await("the late completion, through the reconciliation", WAIT,
          () -> sink.completedSessions().contains("late-1"));
      assertEquals(lateOrdering, sink.notices.get("late-1/completed").ordering());
      assertEquals(7, sink.completedSessions().size());
    }
  }

  @Test
  void aRescanAfterARestartRedeliversItsWindowOnceAndThenOnlyWhatWasMissed() throws Exception {
    // The feed is younger than its window, so every rescan reads the tag from ordering 0; before the
    // fix each one redelivered everything below the offset the restarted live stream started at.
    Config node = TestDatabases.node(database(), false);
    FeedSettings settings = settings(Duration.ofHours(1)); // rescans only when asked below
    try (TrainingNode n = TrainingNode.start(node)) {
      RecordingSink first = new RecordingSink();
      TrajectoryFeed.start(n.system(), "restarted", first, settings);
      completedSessions(n.dataCollector(), "before", "agent-a", 12);
      await("12 completions", WAIT, () -> first.completedSessions().size() == 12);
      long maxTagged = queryLong(n.journal(), MAX_TAGGED);
      await("offset stored", WAIT, () -> stored(n, "restarted") == maxTagged);
    }
    RecordingSink sink = new RecordingSink();
    try (TrainingNode n = TrainingNode.start(node)) {
      ActorRef<TaggedEventFeed.Command> feed = TrajectoryFeed.start(n.system(), "restarted", sink, settings);
      completedSessions(n.dataCollector(), "after", "agent-a", 3);
      await("3 new completions", WAIT, () -> sink.completedSessions().size() == 3);
      int live = sink.deliveries.get();
      assertEquals(3, live, "the live stream resumes after the stored offset");

      assertEquals(12L, reconcile(n, feed), "the first rescan delivers the window below the stored offset");
      assertEquals(15, sink.deliveries.get());
      assertEquals(0L, reconcile(n, feed), "a second rescan of the same window delivers nothing again");
      assertEquals(0L, reconcile(n, feed));
      assertEquals(15, sink.deliveries.get(), "no repeated re-delivery");
      assertEquals(15, sink.completedSessions().size());

      completedSessions(n.dataCollector(), "later", "agent-a", 2);
      await("2 more completions", WAIT, () -> sink.completedSessions().size() == 17);
      assertEquals(0L, reconcile(n, feed), "what the live stream delivered is not delivered again");
      assertEquals(17, sink.deliveries.get());
    }
  }

  private static long reconcile(TrainingNode n, ActorRef<TaggedEventFeed.Command> feed) throws Exception {
    return AskPattern.<TaggedEventFeed.Command, Long>ask(feed, TaggedEventFeed.Reconcile::new, WAIT,
        n.system().scheduler()).toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
  }

  /** Makes the journal's next ordering {@code next}, leaving a gap. */
  protected abstract void skipOrderings(JournalSettings journal, long next);

  private static long stored(TrainingNode n, String feed) {
    try {
      return FeedOffsetStore.readStoredOffset(n.system(), feed).toCompletableFuture().get(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      return -1;
    }
  }
}
