package io.otl.node.readside;

import static io.otl.node.readside.FeedTestSupport.await;
import static io.otl.node.readside.FeedTestSupport.completedSessions;
import static io.otl.node.readside.FeedTestSupport.queryLong;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.node.TrainingNode;
import io.otl.node.testing.TestDatabases;
import java.time.Duration;
import java.util.Map;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.junit.jupiter.api.Test;

/**
 * The node's own trajectory feed and coordinator on PostgreSQL under a burst for one agent: the
 * feed hands the coordinator many completions per message (issue #18), and still every session is
 * counted exactly once, also after a restart replays the coordinator.
 */
class FeedBatchingPostgresTest {
  private static final int SESSIONS = 2000;
  private static final Duration WAIT = Duration.ofMinutes(4);
  private static final String AGENT = "burst-agent";

  @Test
  void thousandsOfCompletionsForOneAgentAreEachCountedOnceAndReplayAfterARestart() throws Exception {
    Config node = ConfigFactory.parseMap(Map.of("agentscope.training.training-runner.trigger.type", "manual"))
        .withFallback(TestDatabases.node(TestDatabases.postgres(), false));
    String rows = "SELECT COUNT(*) FROM event_journal WHERE persistence_id = '"
        + TrainingCoordinator.persistenceId(AGENT).id() + "'";
    int pooled;
    try (TrainingNode n = TrainingNode.start(node)) {
      completedSessions(n.dataCollector(), "burst", AGENT, SESSIONS);
      // one pool event (pooled or filtered) per session, and no more: each counted once
      await(SESSIONS + " coordinator events", WAIT, () -> queryLong(n.journal(), rows) >= SESSIONS);
      assertEquals(SESSIONS, queryLong(n.journal(), rows));
      pooled = status(n).poolSize();
      assertTrue(pooled > 0 && pooled <= SESSIONS, "pool " + pooled);
    }
    try (TrainingNode n = TrainingNode.start(node)) {
      assertEquals(pooled, status(n).poolSize(), "the restart replays the same pool");
      completedSessions(n.dataCollector(), "more", AGENT, 10);
      await("10 more coordinator events", WAIT, () -> queryLong(n.journal(), rows) >= SESSIONS + 10);
      assertEquals(SESSIONS + 10, queryLong(n.journal(), rows),
          "what the feed redelivers after the restart is not counted again");
    }
  }

  private static TrainingCoordinator.CoordinatorView status(TrainingNode n) throws Exception {
    return ClusterSharding.get(n.system()).entityRefFor(TrainingCoordinator.ENTITY_TYPE_KEY, AGENT)
        .<TrainingCoordinator.CoordinatorView>ask(TrainingCoordinator.GetStatus::new, Duration.ofSeconds(30))
        .toCompletableFuture().get();
  }
}
