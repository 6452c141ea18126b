package io.otl.core.api;

import io.otl.core.session.AgentSession.Rejected;
import io.otl.core.session.NewSessionRefusals;
import io.otl.core.session.SessionInput;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Whether a session is stored, asked before its entity is addressed for a read, or for a write its entity
 * would refuse were it new: sharding journals every entity it starts and stops (remember-entities), so a
 * read of an unknown session, feedback to it, or bad input to a new id grew the journal, and anyone could
 * grow it by probing (trial t169: 50 reads of unknown sessions, 118 rows). Those are answered here, from
 * one indexed read of the journal, without the entity.
 *
 * <p>Cheap where it is hot: a session this node stored into or read is remembered (the least recently
 * used forgotten first), and its reads and feedback skip the journal read; a write a new session accepts
 * is not checked at all. An acknowledged write is in the journal (a session replies after its write), so
 * the read never calls a session unknown once a write to it was acknowledged.
 */
public final class StoredSessions {
  /** Checks nothing: every session is addressed (a collector without a journal to ask). */
  public static final StoredSessions NONE = new StoredSessions(null, null, 0);

  private final SessionOwners journal;
  private final NewSessionRefusals refusals;
  private final Map<String, Boolean> known;

  /**
   * @param journal the read of a session's first event
   * @param refusals what a new session refuses, as its entity decides it
   * @param capacity sessions remembered as stored
   */
  public StoredSessions(SessionOwners journal, NewSessionRefusals refusals, int capacity) {
    this.journal = journal;
    this.refusals = refusals;
    this.known = new LinkedHashMap<>(256, 0.75f, true) {
      @Override
      protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
        return size() > capacity;
      }
    };
  }

  /**
   * Whether the session may hold something, so its entity is to be asked: false only when the journal
   * holds none of its events. A failed read says true: the entity answers, as before the read existed.
   */
  CompletionStage<Boolean> mayBeStored(String sessionId) {
    if (journal == null || remembered(sessionId)) return CompletableFuture.completedFuture(true);
    return journal.ownerOf(sessionId).handle((owner, failure) -> {
      if (failure != null) return true;
      if (owner.isPresent()) stored(sessionId);
      return owner.isPresent();
    });
  }

  /** The refusal the session would give these inputs if it has stored nothing, or null. */
  Rejected refusalIfNew(String sessionId, String agentId, List<SessionInput> inputs) {
    return refusals == null ? null : refusals.refusal(sessionId, agentId, inputs);
  }

  /** The session holds events (this node stored into it, or read it). */
  synchronized void stored(String sessionId) {
    known.put(sessionId, Boolean.TRUE);
  }

  private synchronized boolean remembered(String sessionId) {
    return known.get(sessionId) != null;
  }
}
