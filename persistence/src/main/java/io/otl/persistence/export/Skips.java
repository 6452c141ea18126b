package io.otl.persistence.export;

import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps one poisoned trajectory from failing a whole export (issue #14): a session whose stored
 * events cannot be read (e.g. JSON nested deeper than Jackson reads), or whose line cannot be
 * written, is left out, counted by reason for the manifest and logged with its ids. A database
 * failure still fails the export: it says nothing about the data, and skipping would drop good
 * trajectories silently. Log lines name the error class only: Jackson's messages quote payloads.
 */
final class Skips {
  private static final Logger log = LoggerFactory.getLogger(Skips.class);
  static final String UNREADABLE = "unreadable_event";
  static final String UNCONVERTIBLE = "unconvertible_trajectory";

  private final String agentId;
  private final Map<String, Integer> counts = new TreeMap<>();
  /** The sessions behind each count, so a job's lineage can say why a session it took is not in its file. */
  private final Map<String, java.util.SortedSet<String>> sessions = new TreeMap<>();

  Skips(String agentId) {
    this.agentId = agentId;
  }

  /** The session replayed, or empty when one of its events cannot be read. */
  CompletionStage<Optional<Trajectory>> replay(String sessionId, Function<String, CompletionStage<Trajectory>> replay) {
    CompletionStage<Trajectory> stage;
    try {
      stage = replay.apply(sessionId);
    } catch (RuntimeException e) {
      stage = CompletableFuture.failedFuture(e);
    }
    return stage.handle((t, e) -> {
      if (e == null) return Optional.of(t);
      if (isDatabaseFailure(e)) throw new java.util.concurrent.CompletionException(e);
      skip(sessionId, UNREADABLE, e);
      return Optional.<Trajectory>empty();
    });
  }

  /** The line, or empty when the trajectory cannot be converted or rendered. */
  Optional<String> convert(Trajectory t, Function<Trajectory, Optional<String>> convert) {
    try {
      return convert.apply(t);
    } catch (RuntimeException e) {
      skip(t.sessionId(), UNCONVERTIBLE, e);
      return Optional.empty();
    }
  }

  private synchronized void skip(String sessionId, String reason, Throwable e) {
    counts.merge(reason, 1, Integer::sum);
    sessions.computeIfAbsent(reason, r -> new java.util.TreeSet<>()).add(sessionId);
    log.warn("export for agent {}: session {} skipped ({}: {})", agentId, sessionId, reason,
        root(e).getClass().getSimpleName());
  }

  synchronized Map<String, Integer> counts() {
    return java.util.Collections.unmodifiableMap(new TreeMap<>(counts));
  }

  /**
   * {@code excluded} (the selection's sessions by reason) with the skipped sessions under their reasons
   * ({@link #UNREADABLE}, {@link #UNCONVERTIBLE}): a job's lineage answered {@code excludedFor: null} for a
   * session it took and the export skipped, as for one not exported yet (trial-api).
   */
  synchronized Map<String, java.util.List<String>> withSkippedSessions(Map<String, java.util.List<String>> excluded) {
    if (sessions.isEmpty()) return excluded;
    Map<String, java.util.List<String>> all = new TreeMap<>(excluded);
    sessions.forEach((reason, ids) -> all.put(reason, java.util.List.copyOf(ids)));
    return java.util.Collections.unmodifiableMap(all);
  }

  private static Throwable root(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null && c.getCause() != c) c = c.getCause();
    return c;
  }

  private static boolean isDatabaseFailure(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof java.sql.SQLException || c instanceof java.util.concurrent.TimeoutException) return true;
    }
    return false;
  }
}
