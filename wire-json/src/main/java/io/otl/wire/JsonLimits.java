package io.otl.wire;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * What an ingested JSON document may hold beyond being valid JSON (issue #14.6, #14.7): no deeper
 * nesting than a limit, no NUL characters or lone surrogates in strings or keys, only finite
 * numbers. Shared by the HTTP edge and Kafka ingestion so both refuse the same documents, which
 * would otherwise be stored and break exports later (Infinity, depth past Jackson's limits). The
 * rules live in {@link io.otl.core.StrictValues}, which the embedding API applies too.
 */
public final class JsonLimits {
  /** The default nesting limit: the outermost object counts 1. */
  public static final int DEFAULT_MAX_DEPTH = 32;

  private JsonLimits() {}

  /** Why {@code node} cannot be ingested, naming the JSON path; null when it can. */
  public record Problem(boolean tooDeep, String message) {}

  /**
   * A key as error messages may show it: as sent when it is a plain word, else {@code *}. A key
   * is client data (an e-mail, a phone number as a map key) and answers must not echo it.
   */
  public static String shownKey(String key) {
    return io.otl.core.Ids.shownKey(key);
  }

  public static Problem problem(JsonNode node, String path, int maxDepth) {
    io.otl.core.StrictValues.Problem p = io.otl.core.StrictValues.problem(node, path, maxDepth);
    return p == null ? null : new Problem(p.tooDeep(), p.message());
  }

  /** Why a string cannot be stored as sent, or null. */
  static String textProblem(String s) {
    return io.otl.core.StrictValues.textProblem(s);
  }
}
