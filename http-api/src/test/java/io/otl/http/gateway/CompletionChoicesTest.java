package io.otl.http.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * A stream of {@code n} > 1 choices interleaves their chunks (OpenAI, vLLM): choice 0 may finish
 * while choice 1 is still streaming. A stream cut then was taken for a whole answer (choice 0's
 * finish reason ended it), so a client gone or an upstream broken mid-answer was recorded as neither.
 */
class CompletionChoicesTest {
  private static String chunk(int index, String content, String finish) {
    return "data: {\"id\":\"r1\",\"choices\":[{\"index\":" + index + ",\"delta\":"
        + (content == null ? "{}" : "{\"content\":\"" + content + "\"}") + ",\"finish_reason\":"
        + (finish == null ? "null" : "\"" + finish + "\"") + "}]}\n\n";
  }

  private static void feed(Completion c, String sse) {
    c.feed(sse.getBytes(StandardCharsets.UTF_8), System.nanoTime());
  }

  @Test
  void aStreamCutAfterChoiceZeroFinishedButBeforeChoiceOneIsNotWhole() {
    Completion c = new Completion(false);
    feed(c, chunk(0, "Hi", null) + chunk(1, "Hello", null) + chunk(0, null, "stop") + chunk(1, " there", null));
    assertEquals("Hi", c.content(), "choice 0 is what is recorded");
    assertEquals("stop", c.finishReason());
    assertFalse(c.finished(), "choice 1 has not finished: the answer was cut");
    feed(c, chunk(1, null, "length"));
    assertTrue(c.finished(), "every choice finished (a server that sends no [DONE])");
    assertEquals("stop", c.finishReason(), "choice 0's finish reason, not the last one's");
  }

  @Test
  void doneEndsTheStreamAndOneChoiceEndsWithItsFinishReason() {
    Completion one = new Completion(false);
    feed(one, chunk(0, "Hi", null));
    assertFalse(one.finished());
    feed(one, chunk(0, null, "stop"));
    assertTrue(one.finished());
    Completion done = new Completion(false);
    feed(done, chunk(0, "Hi", null) + chunk(1, "Ho", null) + "data: [DONE]\n\n");
    assertTrue(done.finished(), "[DONE] is the end whatever came before it");
  }
}
