package io.otl.core.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class JobIdTest {

  @Test
  void jobIdsRoundTripToTheirAgentEvenWithDashesAndDigits() {
    for (String agent : new String[] {"a", "my-agent", "my-agent-3", "7-x", "1", "a.b:c_d-9", "-", "x".repeat(64)}) {
      for (int seq : new int[] {1, 2, 10, 123456}) {
        String jobId = TrainingCoordinator.jobId(seq, agent);
        assertEquals(Optional.of(agent), TrainingCoordinator.agentIdOf(jobId), jobId);
      }
    }
    assertEquals("job-12-my-agent-3", TrainingCoordinator.jobId(12, "my-agent-3"));
  }

  @Test
  void malformedJobIdsHaveNoAgent() {
    for (String bad : new String[] {null, "", "job-", "job-1", "job-1-", "job--a", "job-x-a", "job-01-a",
        "Job-1-a", "run-1-a", "job-1-a/b", "job-1-" + "x".repeat(65), "job-12345678901-a"}) {
      assertEquals(Optional.empty(), TrainingCoordinator.agentIdOf(bad), String.valueOf(bad));
    }
  }

  @Test
  void theSeqMayHoldEveryDigitAndUpToNineOfThem() {
    for (int seq : new int[] {9, 19, 123456789}) {
      assertEquals(Optional.of("a-9"), JobIds.agentIdOf(JobIds.jobId(seq, "a-9")), "seq " + seq);
      assertEquals(seq, JobIds.seqOf(JobIds.jobId(seq, "a-9")));
    }
    assertEquals(Optional.empty(), JobIds.agentIdOf("job-1234567890-a"), "ten digits");
    assertEquals(Optional.empty(), JobIds.agentIdOf("job-1:-a"), "':' follows '9' but is no digit");
    assertEquals(0, JobIds.seqOf("job-x-a"));
  }
}
