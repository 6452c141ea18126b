package io.otl.persistence.export;

import io.otl.core.coordinator.DatasetManifest;
import java.util.Map;
import java.util.TreeMap;

/**
 * The one place an export counts what it saw and what it left out, by reason (design §6: the
 * manifest counts every exclusion by reason). Reasons are short kebab-case names such as
 * {@code below-sft-min-reward}; every part of the export that drops a trajectory (selection,
 * formats, scans) records it here. Thread-safe: stream stages may run on different threads.
 */
public final class ExportExclusions {
  public static final String NOT_COMPLETED = "not-completed";
  public static final String NO_PROMPT = "no-user-message";
  public static final String NO_ANSWER = "no-assistant-answer";
  /**
   * SFT: the line would end before its first response the user rated down, with nothing left to
   * train; PPO/GRPO: every answer of the task was rated down, leaving no reference to score against.
   */
  public static final String RATED_DOWN_ANSWER = "rated-down-answer";
  public static final String BELOW_SFT_MIN_REWARD = "below-sft-min-reward";
  /**
   * PPO/GRPO: the recorded answer, the task's {@code reference}, has a reward below sft-min-reward;
   * the rendered workflow scores rollouts against the reference alone, so it would reward the failure.
   */
  public static final String REFERENCE_BELOW_SFT_MIN_REWARD = "reference-below-sft-min-reward";
  public static final String BELOW_MIN_QUALITY = "below-min-quality";
  public static final String ROLLED_BACK_VERSION = "served-by-rolled-back-version";
  public static final String DPO_SINGLE = "dpo-only-answer-to-its-task";
  public static final String DPO_BELOW_MARGIN = "below-dpo-min-margin";
  public static final String DPO_NO_CHOSEN = "dpo-no-answer-fit-to-be-chosen";
  public static final String DPO_NOT_BEST_OR_WORST = "dpo-neither-best-nor-worst-of-its-task";
  /** Every answer that could be rejected says what the chosen one says: no preference to learn. */
  public static final String DPO_SAME_ANSWER = "dpo-no-different-answer";
  /** In the agent's held-out evaluation set (eval-fraction): written to the eval file instead. */
  public static final String HELD_OUT = "held-out-for-eval";
  public static final String DUPLICATE_EXACT = Dedup.EXACT;
  public static final String DUPLICATE_NEAR = Dedup.NEAR;
  /** Its ids hold what the node's rules take: the line can carry them neither raw nor rewritten (they join the manifest). */
  public static final String PII_IN_METADATA = AsWritten.PII_IN_METADATA;
  /** A JSON number holds what the node's rules take: a string in its place would break the line's own schema. */
  public static final String PII_IN_A_NUMBER = AsWritten.PII_IN_A_NUMBER;

  private int seen;
  private final Map<String, Integer> byReason = new TreeMap<>();
  /** The sessions behind each count, so lineage can say why a session a job took is not in its file. */
  private final Map<String, java.util.SortedSet<String>> sessionsByReason = new TreeMap<>();

  /** One more trajectory considered. */
  public synchronized void seen() {
    seen++;
  }

  /** {@code sessionIds}, considered and left out for {@code reason} before the stream ran. */
  public synchronized void excludeUpfront(String reason, java.util.Collection<String> sessionIds) {
    for (String id : sessionIds) {
      seen++;
      exclude(reason, id);
    }
  }

  /** One trajectory, {@code sessionId}, left out for {@code reason}. */
  public synchronized void exclude(String reason, String sessionId) {
    byReason.merge(reason, 1, Integer::sum);
    sessionsByReason.computeIfAbsent(reason, r -> new java.util.TreeSet<>()).add(sessionId);
  }

  public synchronized int seenCount() {
    return seen;
  }

  /** Counts by reason, sorted by reason (the manifest's bytes do not depend on timing). */
  public synchronized Map<String, Integer> byReason() {
    return Map.copyOf(new TreeMap<>(byReason));
  }

  /**
   * The sessions left out, by reason, each list sorted (the journal's bytes do not depend on timing): the
   * manifest's {@code excludedSessionIds}, the ids behind {@link #byReason}.
   */
  public synchronized Map<String, java.util.List<String>> sessionsByReason() {
    Map<String, java.util.List<String>> out = new TreeMap<>();
    sessionsByReason.forEach((reason, ids) -> out.put(reason, java.util.List.copyOf(ids)));
    return java.util.Collections.unmodifiableMap(out);
  }

  /** "1,204 seen: 880 below-sft-min-reward, 12 pii" — what an empty export reports. */
  public synchronized String summary() {
    return DatasetManifest.selectionSummary(seen, byReason);
  }
}
