package io.otl.persistence.export;

import io.otl.core.coordinator.DatasetManifest;
import java.util.List;
import java.util.Map;

/**
 * What an export wrote (the coordinator's {@code DatasetManifest} has the same fields).
 *
 * @param path the JSON Lines file (when {@code count} is 0 no file is left there)
 * @param count lines written
 * @param sha256 hex SHA-256 of the file's bytes
 * @param sessionIds the sessions in the file, in line order (for DPO: chosen, rejected per line)
 * @param piiFindings "rule: n lines" per built-in PII rule that matched a written line; empty when clean
 * @param format sft | dpo | rl
 * @param manifestPath the manifest written next to the file (none when {@code count} is 0)
 * @param seen trajectories considered
 * @param exclusions trajectories left out by the selection rules, by reason
 * @param skipped sessions left out because a stored event could not be read or converted, by reason
 * @param fileWritten false when nothing was selected, or when the PII scan found something and PII
 *     was not allowed: no file is left
 * @param desensitizedAsWritten lines the journal holds raw (an earlier build's rules) that the file holds
 *     desensitized by the node's rules
 * @param excludedSessionIds the sessions behind {@code exclusions} and {@code skipped}: by reason, each list sorted
 */
public record ExportResult(
    String path, int count, String sha256, List<String> sessionIds, List<String> piiFindings, String format,
    String manifestPath, int seen, Map<String, Integer> exclusions, Map<String, Integer> skipped,
    boolean fileWritten, int desensitizedAsWritten, Map<String, List<String>> excludedSessionIds) {
  public ExportResult {
    excludedSessionIds = excludedSessionIds == null ? Map.of() : excludedSessionIds;
  }

  /** A file written with everything selected: nothing excluded or skipped. */
  public ExportResult(String path, int count, String sha256, List<String> sessionIds, List<String> piiFindings,
      String format, String manifestPath) {
    this(path, count, sha256, sessionIds, piiFindings, format, manifestPath, count, Map.of(), Map.of(), true, 0, Map.of());
  }

  /** Nothing was written: the selection counts say why. */
  public boolean empty() {
    return count == 0;
  }

  /** "1,204 seen: 880 below-sft-min-reward, …". */
  public String selectionSummary() {
    return DatasetManifest.selectionSummary(seen, exclusions);
  }

  /**
   * Why a window export selected nothing. With no session seen, "0 seen: none excluded" read as if
   * the filters had passed everything of an agent the journal does not know (trial t73: a misspelt
   * agent id, a window without completions): say which agent and window held no completed session.
   */
  public String nothingSelected(String agentId, java.time.Instant since, java.time.Instant until) {
    if (seen > 0 || !skipped.isEmpty()) return selectionSummary();
    String window = (since == null ? "" : " at or after " + since)
        + (until == null ? "" : (since == null ? "" : " and") + " before " + until);
    return "0 seen: the journal has no session of agent " + io.otl.core.Ids.shown(agentId) + " completed" + window
        + " (agent ids are case-sensitive)";
  }
}
