package io.otl.core.api;

import io.otl.core.Ids;
import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.AgentSession;
import io.otl.core.session.PiiRules;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * Refuses a NEW session or agent whose id holds an API key ({@link Ids#keyProblem}), before any entity
 * is addressed: sharding remembers every entity it starts (remember-entities, in the journal), so a
 * refusal from inside the entity still journaled the id. Ids something already has (a journal an
 * earlier build wrote) pass: whether they exist is read from the journal, and only for a key-like id,
 * so ordinary ids cost nothing.
 */
public final class KeyLikeIds {
  /** Checks nothing: for a collector or router without a journal to ask (tests of the entities alone). */
  public static final KeyLikeIds NONE = new KeyLikeIds(null);

  /** Whether an entity with this persistence id has written an event; null: nothing is checked. */
  private final Function<String, CompletionStage<Boolean>> exists;

  public KeyLikeIds(Function<String, CompletionStage<Boolean>> exists) {
    this.exists = exists;
  }

  /**
   * Why a write of {@code agentId} (null: the session's own agent) to {@code sessionId} may not start
   * that session, or null: the session id holds a key and no such session exists, or the session is
   * new and its agent's id holds a key and no such agent exists.
   */
  CompletionStage<Rejection> forSession(String sessionId, String agentId) {
    boolean sessionKey = PiiRules.keyInId(sessionId);
    boolean agentKey = agentId != null && PiiRules.keyInId(agentId);
    if (exists == null || !sessionKey && !agentKey) return CompletableFuture.completedFuture(null);
    return exists.apply(persistenceId(AgentSession.ENTITY_TYPE_KEY.name(), sessionId)).thenCompose(stored -> {
      if (stored) return CompletableFuture.completedFuture(null);
      if (sessionKey) return CompletableFuture.completedFuture(new Rejection("sessionId", Ids.keyProblem("sessionId", sessionId)));
      return forAgent(agentId, "agentId");
    });
  }

  /**
   * Whether {@code sessionId} holds a key and no such session is stored: a read of it is answered empty
   * without addressing the session (which would journal its id as a started entity).
   */
  CompletionStage<Boolean> unstoredKeyLike(String sessionId) {
    if (exists == null || !PiiRules.keyInId(sessionId)) return CompletableFuture.completedFuture(false);
    return exists.apply(persistenceId(AgentSession.ENTITY_TYPE_KEY.name(), sessionId)).thenApply(stored -> !stored);
  }

  /** Why {@code agentId} may not be registered (its id holds a key and no such agent exists), or null. */
  CompletionStage<Rejection> forAgent(String agentId, String field) {
    if (exists == null || !PiiRules.keyInId(agentId)) return CompletableFuture.completedFuture(null);
    return exists.apply(persistenceId(ModelVersion.ENTITY_TYPE_KEY.name(), agentId))
        .thenCompose(models -> models ? CompletableFuture.completedFuture(true)
            : exists.apply(persistenceId(TrainingCoordinator.ENTITY_TYPE_KEY.name(), agentId)))
        .thenApply(known -> known ? null : new Rejection(field, Ids.keyProblem(field, agentId)));
  }

  private static String persistenceId(String entityType, String id) {
    return org.apache.pekko.persistence.typed.PersistenceId.of(entityType, id).id();
  }

  /** A refusal: the field named and why, never the id. */
  record Rejection(String field, String message) {}
}
