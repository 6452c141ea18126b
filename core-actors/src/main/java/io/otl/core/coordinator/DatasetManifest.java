package io.otl.core.coordinator;

import io.otl.core.JsonSerializable;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;

/**
 * The manifest of one exported dataset, recorded in the job (lineage: exactly which trajectories
 * trained the model).
 *
 * @param path the JSON Lines file, on a path the training backend can read (none is left when
 *     {@code count} is 0)
 * @param count lines written (DPO may write fewer lines than trajectories: one per pair)
 * @param sha256 hex SHA-256 of the file
 * @param sessionIds the trajectories actually written
 * @param piiFindings names of the PII rules the final scan found in the file (e.g. {@code phone});
 *     empty when clean. Any finding fails the job.
 * @param format the line format, e.g. {@code sft-messages}, {@code dpo}, {@code rl-task}
 * @param seen trajectories the exporter considered (0 in manifests recorded before it was counted)
 * @param exclusions trajectories left out, by reason (e.g. {@code below-sft-min-reward})
 * @param lineage start checkpoint, replay and held-out evaluation set (null before continual
 *     training, and for exporters that do not do it)
 * @param excludedSessionIds the sessions behind {@code exclusions}, by the same reasons, each list sorted:
 *     why a session the job took is not in its file (lineage). Empty in manifests recorded before it
 *     was kept, and for exporters that do not name them: such a session's reason is unknown.
 */
public record DatasetManifest(
    String path,
    int count,
    String sha256,
    List<String> sessionIds,
    List<String> piiFindings,
    String format,
    // Added in 0.2.0: left out when unset, so manifests stored by 0.1.0 are rewritten byte for byte.
    @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_DEFAULT)
    int seen,
    @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_EMPTY)
    Map<String, Integer> exclusions,
    // Added with continual training: left out when unset, so older manifests keep their bytes.
    @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
    DatasetLineage lineage,
    // Added with per-session exclusion reasons: left out when empty, so older manifests keep their bytes.
    @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_EMPTY)
    Map<String, List<String>> excludedSessionIds)
    implements JsonSerializable {
  public DatasetManifest {
    sessionIds = sessionIds == null ? List.of() : List.copyOf(sessionIds);
    piiFindings = piiFindings == null ? List.of() : List.copyOf(piiFindings);
    // Sorted: the journal's JSON (and a golden journal) must not depend on a hash order.
    exclusions = exclusions == null ? Map.of() : java.util.Collections.unmodifiableMap(new java.util.TreeMap<>(exclusions));
    TreeMap<String, List<String>> byReason = new TreeMap<>();
    if (excludedSessionIds != null) {
      excludedSessionIds.forEach((reason, ids) -> byReason.put(reason, ids == null ? List.of()
          : ids.stream().sorted().toList()));
    }
    excludedSessionIds = java.util.Collections.unmodifiableMap(byReason);
  }

  /** A manifest without the sessions behind its exclusions (recorded before they were kept). */
  public DatasetManifest(String path, int count, String sha256, List<String> sessionIds, List<String> piiFindings,
      String format, int seen, Map<String, Integer> exclusions, DatasetLineage lineage) {
    this(path, count, sha256, sessionIds, piiFindings, format, seen, exclusions, lineage, Map.of());
  }

  /** A manifest without continual-training lineage. */
  public DatasetManifest(String path, int count, String sha256, List<String> sessionIds, List<String> piiFindings,
      String format, int seen, Map<String, Integer> exclusions) {
    this(path, count, sha256, sessionIds, piiFindings, format, seen, exclusions, null, Map.of());
  }

  /** A manifest without selection counts (an exporter that does not count: seen 0). */
  public DatasetManifest(
      String path, int count, String sha256, List<String> sessionIds, List<String> piiFindings, String format) {
    this(path, count, sha256, sessionIds, piiFindings, format, 0, Map.of(), null, Map.of());
  }

  /**
   * Why the export left {@code sessionId} out: its reason in {@code exclusions} (e.g. {@code duplicate-exact}),
   * or null when it is in the file, was never given to the export, or the manifest predates the per-session
   * record.
   */
  public String exclusionOf(String sessionId) {
    for (Map.Entry<String, List<String>> e : excludedSessionIds.entrySet()) {
      if (java.util.Collections.binarySearch(e.getValue(), sessionId) >= 0) return e.getKey();
    }
    return null;
  }

  public boolean clean() {
    return piiFindings.isEmpty();
  }

  /** "1,204 seen: 880 below-sft-min-reward, 12 pii" (exclusions largest first). */
  public String selectionSummary() {
    return selectionSummary(seen, exclusions);
  }

  /** The one wording of an export's selection counts, for the CLI, the manifest and the pre-flight. */
  public static String selectionSummary(int seen, Map<String, Integer> exclusions) {
    StringJoiner parts = new StringJoiner(", ");
    new TreeMap<>(exclusions).entrySet().stream()
        .sorted((a, b) -> Integer.compare(b.getValue(), a.getValue()))
        .forEach(e -> parts.add(String.format(Locale.ROOT, "%,d %s", e.getValue(), e.getKey())));
    String head = String.format(Locale.ROOT, "%,d seen", seen);
    return exclusions.isEmpty() ? head + ": none excluded" : head + ": " + parts;
  }
}
