package io.otl.persistence.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.session.AgentSession.ReasoningStepRecorded;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** A session timeline's reasoning line says what a step holds, also a step without a thought. */
class TimelineReasoningTest {
  private static final Instant AT = Instant.parse("2025-06-01T10:00:00Z");

  private static String line(String thought, String action, String observation) {
    return Timeline.describe(new ReasoningStepRecorded("r", AT, AT, 3, thought, action, observation));
  }

  @Test
  void aStepWithAThoughtShowsIt() {
    assertEquals("reasoning #3: look up the parcel", line("look up the parcel", "search", "found"));
  }

  @Test
  void aStepWithoutAThoughtNamesItsActionAndObservation() {
    // The AgentScope hook's error step: action "error", the exception's class as observation.
    assertEquals("reasoning #3 (no thought): action error, observation java.io.IOException",
        line(null, "error", "java.io.IOException"));
    assertEquals("reasoning #3 (no thought): action search", line(" ", "search", null));
  }

  @Test
  void aStepWithoutIndexIsNotNumberedMinusOne() {
    assertEquals("reasoning (no index): look it up", Timeline.describe(
        new ReasoningStepRecorded("r", AT, AT, -1, "look it up", null, null)));
  }

  @Test
  void anEmptyStepSaysSo() {
    assertEquals("reasoning #3 (no thought, action or observation recorded)", line(null, null, ""));
  }
}
