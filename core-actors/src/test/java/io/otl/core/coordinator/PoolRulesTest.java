package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.core.coordinator.CoordinatorEvents.Event;
import io.otl.core.coordinator.CoordinatorEvents.JobRequested;
import io.otl.core.coordinator.CoordinatorEvents.RewardUpdated;
import io.otl.core.coordinator.CoordinatorEvents.TrajectoryFiltered;
import io.otl.core.coordinator.CoordinatorEvents.TrajectoryPooled;
import io.otl.core.coordinator.CoordinatorProtocol.TrajectoryAvailable;
import io.otl.core.coordinator.CoordinatorReplies.Disposition;
import io.otl.core.coordinator.CoordinatorReplies.TrajectoryAck;
import io.otl.core.coordinator.CoordinatorState.State;
import io.otl.core.coordinator.TrainingPolicy.Backend;
import io.otl.core.coordinator.TrainingPolicy.TriggerType;
import io.otl.core.entity.Plan;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link PoolRules} on its own: every branch of "what does this trajectory change" (new, filtered,
 * revised, duplicate, used), the boundaries of min-quality and of the input checks, and which
 * trajectories' rewards go to the trinity proxy. The entity tests reach these rules only through
 * the happy paths.
 */
class PoolRulesTest {
  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final Instant T1 = T0.plusSeconds(60);
  private static final Instant NOW = T0.plusSeconds(3600);

  private static TrainingPolicy policy(String backend) {
    return TrainingPolicy.fromConfig(ConfigFactory.parseString(
            "training-runner { backend = " + backend + ", min-quality = 0.6 }")
        .withFallback(ConfigFactory.defaultReference().getConfig("agentscope.training")));
  }

  private static final TrainingPolicy RAY = policy("ray-jobs");
  private static final TrainingPolicy PROXY = policy("trinity-proxy");

  private static TrajectoryAvailable traj(String id, double reward, double quality, Instant completedAt,
      boolean revision, List<String> msgIds) {
    return new TrajectoryAvailable(id, "v1", reward, quality, completedAt, revision, msgIds, null);
  }

  private static TrajectoryAvailable traj(String id, double reward, double quality, Instant completedAt,
      boolean revision) {
    return traj(id, reward, quality, completedAt, revision, List.of());
  }

  private static Plan<State, Event> plan(State s) {
    return new Plan<>(s, CoordinatorEventHandler::applyEvent);
  }

  /** Judges one trajectory against {@code s}; the plan holds what it decided. */
  private static Plan<State, Event> judged(State s, TrajectoryAvailable c, TrainingPolicy policy,
      Disposition expected, String expectedDetail) {
    Plan<State, Event> p = plan(s);
    TrajectoryAck ack = PoolRules.judge(p, c, policy, NOW);
    assertEquals(c.sessionId(), ack.sessionId());
    assertEquals(expected, ack.disposition(), ack.detail());
    assertEquals(expectedDetail, ack.detail());
    return p;
  }

  private static State after(State s, TrajectoryAvailable c) {
    Plan<State, Event> p = plan(s);
    PoolRules.judge(p, c, RAY, NOW);
    return p.state();
  }

  @Test
  void aNewEligibleTrajectoryJoinsThePoolAtItsCompletionTime() {
    Plan<State, Event> p = judged(State.EMPTY, traj("s1", 0.8, 0.9, T0, false), RAY,
        Disposition.POOLED, "joined the pool");
    TrajectoryPooled pooled = assertInstanceOf(TrajectoryPooled.class, p.events().get(0));
    assertEquals(1, p.events().size());
    assertEquals("s1", pooled.sessionId());
    assertEquals("v1", pooled.modelVersion());
    assertEquals(0.8, pooled.reward());
    assertEquals(0.9, pooled.qualityScore());
    assertEquals(T0, pooled.completedAt());
    assertEquals(1, p.state().poolSize());
    assertEquals(0.9, p.state().meanQuality(), 1e-12);
  }

  @Test
  void aTrajectoryWithoutCompletionTimeIsDatedWhenJudged() {
    Plan<State, Event> p = judged(State.EMPTY, traj("s1", 0.8, 0.9, null, false), RAY,
        Disposition.POOLED, "joined the pool");
    assertEquals(NOW, ((TrajectoryPooled) p.events().get(0)).completedAt());

    Plan<State, Event> f = judged(State.EMPTY, traj("s2", 0.8, 0.1, null, false), RAY,
        Disposition.FILTERED, "quality 0.100 is below min-quality 0.600");
    assertEquals(NOW, ((TrajectoryFiltered) f.events().get(0)).completedAt());
  }

  @Test
  void minQualityItselfIsEligibleAndJustBelowIsFiltered() {
    judged(State.EMPTY, traj("at", 0.0, 0.6, T0, false), RAY, Disposition.POOLED, "joined the pool");
    Plan<State, Event> p = judged(State.EMPTY, traj("below", 0.0, 0.5999, T0, false), RAY,
        Disposition.FILTERED, "quality 0.600 is below min-quality 0.600");
    TrajectoryFiltered f = assertInstanceOf(TrajectoryFiltered.class, p.events().get(0));
    assertEquals(0.5999, f.qualityScore());
    assertEquals(T0, f.completedAt());
    assertEquals(0, p.state().poolSize());
  }

  @Test
  void malformedTrajectoriesAreInvalidAndChangeNothing() {
    for (TrajectoryAvailable bad : List.of(
        traj("", 0.5, 0.9, T0, false),
        traj("s1", Double.NaN, 0.9, T0, false),
        traj("s1", Double.POSITIVE_INFINITY, 0.9, T0, false),
        traj("s1", 0.5, -0.0001, T0, false),
        traj("s1", 0.5, 1.0001, T0, false),
        traj("s1", 0.5, Double.NaN, T0, false))) {
      Plan<State, Event> p = plan(State.EMPTY);
      TrajectoryAck ack = PoolRules.judge(p, bad, RAY, NOW);
      assertEquals(Disposition.INVALID, ack.disposition(), bad.toString());
      assertTrue(p.isEmpty(), bad.toString());
    }
    TrajectoryAck badId = PoolRules.judge(plan(State.EMPTY), traj("", 0.5, 0.9, T0, false), RAY, NOW);
    assertTrue(badId.detail().startsWith("sessionId"), badId.detail());
    assertEquals("reward must be a finite number, was NaN",
        PoolRules.validate(traj("s1", Double.NaN, 0.9, T0, false)));
    assertEquals("qualityScore must be in [0, 1], was 1.0001",
        PoolRules.validate(traj("s1", 0.5, 1.0001, T0, false)));
    // The bounds themselves are valid qualities.
    assertEquals(null, PoolRules.validate(traj("s1", -3.0, 0.0, T0, false)));
    assertEquals(null, PoolRules.validate(traj("s1", 3.0, 1.0, T0, false)));
  }

  @Test
  void aFilteredTrajectoryJoinsOnlyByANewerRevisionThatRaisesItsQuality() {
    State filtered = after(State.EMPTY, traj("s1", 0.2, 0.3, T0, false));
    assertEquals(0, filtered.poolSize());

    judged(filtered, traj("s1", 0.9, 0.9, T1, false), RAY, Disposition.DUPLICATE, "already seen (filtered)");
    judged(filtered, traj("s1", 0.9, 0.9, T0, true), RAY, Disposition.DUPLICATE, "already seen (filtered)");
    judged(filtered, traj("s1", 0.9, 0.5, T1, true), RAY, Disposition.DUPLICATE, "already seen (filtered)");

    Plan<State, Event> p = judged(filtered, traj("s1", 0.9, 0.9, T1, true), RAY, Disposition.POOLED,
        "joined the pool after a revision raised its quality");
    assertEquals(T1, ((TrajectoryPooled) p.events().get(0)).completedAt());
    assertEquals(1, p.state().poolSize());
  }

  @Test
  void aPooledTrajectoryIsRevisedOnlyByANewerRevisionThatChangesSomething() {
    State pooled = after(State.EMPTY, traj("s1", 0.5, 0.8, T0, false));

    judged(pooled, traj("s1", 0.9, 0.8, T1, false), RAY, Disposition.DUPLICATE, "already in the pool");
    judged(pooled, traj("s1", 0.9, 0.8, T0, true), RAY, Disposition.DUPLICATE, "already in the pool");
    judged(pooled, traj("s1", 0.9, 0.8, T0.minusSeconds(1), true), RAY, Disposition.DUPLICATE,
        "already in the pool");
    judged(pooled, traj("s1", 0.5, 0.8, T1, true), RAY, Disposition.DUPLICATE, "already in the pool");

    Plan<State, Event> reward = judged(pooled, traj("s1", 0.9, 0.8, T1, true), RAY,
        Disposition.REWARD_UPDATED, "reward revised");
    RewardUpdated r = assertInstanceOf(RewardUpdated.class, reward.events().get(0));
    assertEquals(0.9, r.reward());
    assertEquals(0.8, r.qualityScore());
    assertEquals(T1, r.revisedAt());
    assertEquals(NOW, r.at());

    Plan<State, Event> quality = judged(pooled, traj("s1", 0.5, 0.7, T1, true), RAY,
        Disposition.REWARD_UPDATED, "reward revised");
    assertEquals(1, quality.state().poolSize());
    assertEquals(0.7, quality.state().meanQuality(), 1e-12);
  }

  @Test
  void aTrajectoryUsedByAJobIsNeverPooledAgain() {
    State pooled = after(State.EMPTY, traj("s1", 0.5, 0.8, T0, false));
    State used = CoordinatorEventHandler.applyEvent(pooled, new JobRequested("job-1-a", TriggerType.MANUAL,
        "api", Backend.RAY_JOBS, "sft", "base", Map.of(), List.of("s1"), T1));
    judged(used, traj("s1", 0.9, 0.9, T1.plusSeconds(1), true), RAY, Disposition.DUPLICATE,
        "already used by a job");
  }

  @Test
  void onlyTheProxyBackendKeepsMsgIdsAndForwardsTheReward() {
    TrajectoryAvailable withIds = traj("s1", 0.8, 0.9, T0, false, List.of("m1", "m2"));

    Plan<State, Event> proxy = plan(State.EMPTY);
    TrajectoryAck proxyAck = PoolRules.judge(proxy, withIds, PROXY, NOW);
    assertEquals(List.of("m1", "m2"), ((TrajectoryPooled) proxy.events().get(0)).msgIds());
    assertTrue(PoolRules.forwards(proxyAck, withIds, PROXY));
    assertTrue(proxy.state().pendingRewards().containsKey("s1"));

    Plan<State, Event> ray = plan(State.EMPTY);
    TrajectoryAck rayAck = PoolRules.judge(ray, withIds, RAY, NOW);
    assertEquals(List.of(), ((TrajectoryPooled) ray.events().get(0)).msgIds());
    assertFalse(PoolRules.forwards(rayAck, withIds, RAY));

    TrajectoryAvailable noIds = traj("s2", 0.8, 0.9, T0, false);
    assertFalse(PoolRules.forwards(PoolRules.judge(plan(State.EMPTY), noIds, PROXY, NOW), noIds, PROXY));
    TrajectoryAvailable low = traj("s3", 0.8, 0.1, T0, false, List.of("m3"));
    assertFalse(PoolRules.forwards(PoolRules.judge(plan(State.EMPTY), low, PROXY, NOW), low, PROXY));
  }
}
