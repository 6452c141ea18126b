package io.otl.core.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Which writes the key check refuses: a new session or agent whose id holds a key, never one the journal
 * has; ordinary ids cost no journal read. Keys are assembled at run time.
 */
class KeyLikeIdsTest {
  private static final String KEY = "sk-" + "proj-" + "AbCdEf1234567890GhIjKlMnOpQrStUv";
  private final List<String> asked = new ArrayList<>();

  private KeyLikeIds journalHolding(String... persistenceIds) {
    Set<String> stored = Set.of(persistenceIds);
    return new KeyLikeIds(id -> {
      asked.add(id);
      return CompletableFuture.completedFuture(stored.contains(id));
    });
  }

  @Test
  void ordinaryIdsAreNotLookedUp() {
    KeyLikeIds ids = journalHolding();
    assertNull(ids.forSession("support:reset-password:ticket-48213", "user-token:20240101a").toCompletableFuture().join());
    assertNull(ids.forAgent("sk-learn-demo", "agentId").toCompletableFuture().join());
    assertFalse(ids.unstoredKeyLike("hf_session_1").toCompletableFuture().join());
    assertEquals(List.of(), asked);
  }

  @Test
  void aNewSessionOrAgentHoldingAKeyIsRefusedWithoutRepeatingIt() {
    KeyLikeIds ids = journalHolding();
    KeyLikeIds.Rejection session = ids.forSession("s-" + KEY, "bot").toCompletableFuture().join();
    assertEquals("sessionId", session.field());
    assertFalse(session.message().contains(KEY.substring(8)), session.message());
    KeyLikeIds.Rejection agent = ids.forSession("s-1", KEY).toCompletableFuture().join();
    assertEquals("agentId", agent.field());
    assertEquals("X-Agent-Id", ids.forAgent(KEY, "X-Agent-Id").toCompletableFuture().join().field());
    assertTrue(ids.unstoredKeyLike("s-" + KEY).toCompletableFuture().join());
  }

  @Test
  void idsTheJournalHasPass() {
    KeyLikeIds ids = journalHolding("AgentSession|s-" + KEY, "TrainingCoordinator|" + KEY);
    assertNull(ids.forSession("s-" + KEY, null).toCompletableFuture().join(), "an earlier build's session");
    assertNull(ids.forSession("s-new", KEY).toCompletableFuture().join(), "a new session of an earlier build's agent");
    assertNull(ids.forAgent(KEY, "X-Agent-Id").toCompletableFuture().join());
    assertFalse(ids.unstoredKeyLike("s-" + KEY).toCompletableFuture().join());
  }
}
