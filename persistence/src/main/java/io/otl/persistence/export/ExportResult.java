package io.otl.persistence.export;

import java.util.List;

/**
 * What an export wrote (the coordinator's {@code DatasetManifest} has the same fields).
 *
 * @param path the JSON Lines file
 * @param count lines written
 * @param sha256 hex SHA-256 of the file's bytes
 * @param sessionIds the sessions in the file, in line order (for DPO: chosen, rejected per line)
 * @param piiFindings "rule: n lines" per built-in PII rule that matched a written line; empty when clean
 * @param format sft | dpo | rl
 * @param manifestPath the manifest written next to the file
 * @param skipped sessions left out because a stored event could not be read or converted, by reason
 * @param fileWritten false when the PII scan found something and PII was not allowed: no file is left
 */
public record ExportResult(
    String path, int count, String sha256, List<String> sessionIds, List<String> piiFindings, String format,
    String manifestPath, java.util.Map<String, Integer> skipped, boolean fileWritten) {

  /** Before issue #14's skip counts: nothing skipped, the file written. */
  public ExportResult(String path, int count, String sha256, List<String> sessionIds, List<String> piiFindings,
      String format, String manifestPath) {
    this(path, count, sha256, sessionIds, piiFindings, format, manifestPath, java.util.Map.of(), true);
  }
}
