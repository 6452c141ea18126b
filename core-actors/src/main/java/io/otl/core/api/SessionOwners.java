package io.otl.core.api;

import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Which agent owns a session, read from the journal without starting the session entity. The
 * inference gateway checks a session's owner before it forwards a call; for a session id it has
 * never seen, asking the entity would start it (a remember-entities write) and recover it (three
 * journal reads) on the call's critical path, while one indexed read answers the same question.
 * The session is started later, by the recording, off the agent's path. The same read gives the
 * version the session started on, which its later calls keep (design §3.3).
 */
public interface SessionOwners {
  /**
   * The agent whose events the session holds, with the model version it started on, or empty
   * when the session has stored nothing. Neither changes once the session's first event is stored.
   */
  CompletionStage<Optional<Owner>> ownerOf(String sessionId);

  /**
   * @param agentId the agent whose session it is
   * @param modelVersion the version its first call was routed to ({@code SessionStarted}), null if
   *     the session was started without one
   */
  record Owner(String agentId, String modelVersion) {}
}
