package io.otl.persistence.audit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.InferenceCall;
import io.otl.core.session.SessionModel.Role;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * A failed model call (the gateway's, a failed OTLP chat span) is an empty assistant message with
 * {@code inference.error}: the timeline printed "assistant:  (1200 ms)", an answer that said nothing.
 */
class TimelineFailedCallTest {
  private static final Instant AT = Instant.parse("2025-06-01T10:00:00Z");

  private static String line(String content, String error) {
    InferenceCall call = new InferenceCall(null, "qwen", null, null, null, null, null, error, null, null, null);
    return Timeline.describe(new MessageRecorded("m", AT, AT, Role.assistant, content, null, 1200L, call));
  }

  @Test
  void aFailedCallSaysSoWithItsError() {
    assertEquals("assistant: (call FAILED: upstream 503) (1200 ms)", line("", "upstream 503"));
    // a stream that broke after it started keeps its text
    assertEquals("assistant: Par (call FAILED: stream broke) (1200 ms)", line("Par", "stream broke"));
  }

  /**
   * An answer whose client left before it had it all (an asyncio task cancelled mid-stream, a client
   * timeout and its retry; trial t104) is stored with {@code inference.aborted}: the timeline printed it
   * as an answer the agent got, so an audit of what the agent was told read a cut stream as the model's
   * whole answer, and an answer nobody received as one the agent went on from.
   */
  @Test
  void anAnswerTheClientLeftBeforeHavingSaysSo() {
    InferenceCall call = new InferenceCall("v0", "qwen", null, null, null, null, Boolean.TRUE, null, null, null, null);
    assertEquals("assistant: [simulated reply from (ABORTED: the client left before the whole answer) (1200 ms)"
        + " (version v0)",
        Timeline.describe(new MessageRecorded("m", AT, AT, Role.assistant, "[simulated reply from", null, 1200L, call)));
    assertEquals("assistant: (ABORTED: the client left before the whole answer) (1200 ms) (version v0)",
        Timeline.describe(new MessageRecorded("m", AT, AT, Role.assistant, "", null, 1200L, call)));
  }

  @Test
  void anAnsweredCallIsTheAnswer() {
    assertEquals("assistant: Paris. (1200 ms)", line("Paris.", null));
  }
}
