package io.otl.agentscope;

import io.otl.core.api.DataCollector;
import io.otl.core.session.SessionInput;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

/** Records through the node's {@link DataCollector}: no HTTP hop, same desensitization and dedup. */
final class EmbeddedSink implements TrajectorySink {
  private final DataCollector collector;

  EmbeddedSink(DataCollector collector) {
    if (collector == null) throw new IllegalArgumentException("collector is required");
    this.collector = collector;
  }

  @Override
  public CompletionStage<Void> deliver(String sessionId, String agentId, List<SessionInput> events) {
    return deliverWithOutcome(sessionId, agentId, events).thenApply(outcome -> null);
  }

  @Override
  public CompletionStage<Outcome> deliverWithOutcome(String sessionId, String agentId, List<SessionInput> events) {
    return collector.record(sessionId, agentId, events).handle((recorded, error) -> {
      if (error == null) return recorded.sampled() ? Outcome.STORED : Outcome.NOT_SAMPLED;
      Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
      boolean refused = cause instanceof DataCollector.RecordRejectedException;
      // RecordRejectedException names the field, never the value sent: its message is the reason.
      throw new DeliveryException(refused ? "the node refused them: " + cause.getMessage()
          : "not recorded (" + cause.getClass().getSimpleName() + ")", !refused, cause);
    });
  }
}
