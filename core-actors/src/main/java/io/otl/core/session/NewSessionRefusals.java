package io.otl.core.session;

import io.otl.core.session.AgentSession.Rejected;
import java.time.Clock;
import java.util.List;

/**
 * The refusal a session the journal lacks gives a write, decided without the session: sharding
 * journals every entity it starts (remember-entities), so a write refused by a new session's entity
 * still grew the journal, and anyone could grow it by sending bad input to new ids (trial t169). The
 * same checks as the entity's ({@link RecordPlanner} on an empty state), so the refusal is the one it
 * gives, word for word.
 */
public final class NewSessionRefusals {
  private final SessionSettings settings;
  private final Clock clock;

  /** @param settings the sessions' settings, as their entities use them */
  public NewSessionRefusals(SessionSettings settings, Clock clock) {
    this.settings = settings;
    this.clock = clock;
  }

  /**
   * The refusal of {@code inputs} from {@code agentId} (null: the session's own agent) by a session that
   * has stored nothing, or null when such a session would store them (or acknowledge them unsampled).
   */
  public Rejected refusal(String sessionId, String agentId, List<SessionInput> inputs) {
    return new RecordPlanner(sessionId, settings).refusalWhenNew(agentId, inputs, clock.instant());
  }
}
