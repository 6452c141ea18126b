package io.otl.node.trinity;

import io.otl.core.api.DataCollector;
import io.otl.core.session.Scoring;
import io.otl.core.session.SessionSettings.RewardWeights;
import io.otl.core.training.OnlineTrainingBackend;
import io.otl.core.training.ProxyMetrics;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Per-turn rewards for Trinity's proxy: when the coordinator forwards a session's reward, each
 * response that feedback rated by {@code msgId} gets its own reward, sent with exactly that
 * msg_id; the other responses get the session's reward together, as before. The per-turn figures
 * are read from the session itself (the journal), so a retried forward sends the same numbers.
 */
public final class PerTurnRewards implements OnlineTrainingBackend {
  private final OnlineTrainingBackend proxy;
  private final DataCollector sessions;
  private final RewardWeights weights;

  public PerTurnRewards(OnlineTrainingBackend proxy, DataCollector sessions, RewardWeights weights) {
    this.proxy = proxy;
    this.sessions = sessions;
    this.weights = weights;
  }

  @Override
  public CompletionStage<Void> forwardReward(List<String> msgIds, double reward, String taskId, int runId) {
    return readable(taskId).thenCompose(state -> {
      Map<String, Double> turns = state.map(s -> Scoring.turnRewards(s, weights)).orElse(Map.of());
      List<String> rest = new ArrayList<>();
      CompletionStage<Void> sent = CompletableFuture.completedFuture(null);
      for (String id : msgIds) {
        Double turn = turns.get(id);
        if (turn == null) {
          rest.add(id);
        } else {
          sent = sent.thenCompose(v -> proxy.forwardReward(List.of(id), turn, taskId, runId));
        }
      }
      return rest.isEmpty() ? sent : sent.thenCompose(v -> proxy.forwardReward(rest, reward, taskId, runId));
    });
  }

  /**
   * The session, or empty for an id the id rules refuse: an id an earlier build stored before those
   * rules tightened has no per-turn figures to read here, and its whole reward is forwarded as before.
   */
  private CompletionStage<java.util.Optional<io.otl.core.session.AgentSession.State>> readable(String taskId) {
    if (io.otl.core.Ids.problem("sessionId", taskId, io.otl.core.Ids.MAX_SESSION_ID) != null) {
      return CompletableFuture.completedFuture(java.util.Optional.empty());
    }
    return sessions.trajectory(taskId);
  }

  @Override
  public CompletionStage<Void> commit() {
    return proxy.commit();
  }

  @Override
  public CompletionStage<ProxyMetrics> metrics() {
    return proxy.metrics();
  }

  @Override
  public CompletionStage<Boolean> health() {
    return proxy.health();
  }

  @Override
  public String type() {
    return proxy.type();
  }
}
