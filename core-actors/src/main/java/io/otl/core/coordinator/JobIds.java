package io.otl.core.coordinator;

import io.otl.core.Ids;
import java.util.Optional;

/** Job ids: {@code job-<seq>-<agentId>}, unique cluster-wide (one coordinator per agent) and routable. */
public final class JobIds {
  private JobIds() {}

  /** {@code job-<seq>-<agentId>}: unique cluster-wide (one coordinator per agent) and routable. */
  public static String jobId(int seq, String agentId) {
    return "job-" + seq + "-" + agentId;
  }

  /**
   * The agent of a job id made by {@link #jobId}: {@code job-12-my-agent-3} → {@code my-agent-3}.
   * Empty when {@code jobId} is not of that form (so HTTP can answer 404).
   */
  public static Optional<String> agentIdOf(String jobId) {
    if (jobId == null || !jobId.startsWith("job-")) {
      return Optional.empty();
    }
    int i = 4;
    while (i < jobId.length() && jobId.charAt(i) >= '0' && jobId.charAt(i) <= '9') {
      i++;
    }
    if (i == 4 || jobId.charAt(4) == '0' || i - 4 > 9 || i >= jobId.length() || jobId.charAt(i) != '-') {
      return Optional.empty();
    }
    String agentId = jobId.substring(i + 1);
    return Ids.isValidAgentId(agentId) ? Optional.of(agentId) : Optional.empty();
  }

  /** The seq of a job id made by {@link #jobId}; 0 when it has none. */
  static int seqOf(String jobId) {
    int end = jobId.indexOf('-', 4);
    try {
      return Integer.parseInt(jobId.substring(4, end));
    } catch (RuntimeException e) {
      return 0;
    }
  }
}
