package io.otl.node.config;

import java.util.List;

/**
 * The outcome of a successful validation.
 *
 * @param unknownKeys full names of keys under {@code agentscope.training} that this node does not
 *     know (likely typos), as their file wrote them ({@code dataCollector.collectMod}); they are ignored
 * @param warnings one line per finding, ready to log (names and values, never secret values)
 */
public record ValidationReport(List<String> unknownKeys, List<String> warnings) {

  public ValidationReport {
    unknownKeys = List.copyOf(unknownKeys);
    warnings = List.copyOf(warnings);
  }
}
