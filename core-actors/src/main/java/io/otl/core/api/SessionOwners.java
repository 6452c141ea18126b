package io.otl.core.api;

import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Which agent owns a session, read from the journal without starting the session entity. The
 * inference gateway checks a session's owner before it forwards a call; for a session id it has
 * never seen, asking the entity would start it (a remember-entities write) and recover it (three
 * journal reads) on the call's critical path, while one indexed read answers the same question.
 * The session is started later, by the recording, off the agent's path.
 */
public interface SessionOwners {
  /**
   * The agent whose events the session holds, or empty when the session has stored nothing. A
   * session's owner never changes once its first event is stored.
   */
  CompletionStage<Optional<String>> ownerOf(String sessionId);
}
