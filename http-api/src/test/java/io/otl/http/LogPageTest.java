package io.otl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class LogPageTest {

  private static List<LogPage.StepLoss> points(String line) {
    List<LogPage.StepLoss> into = new ArrayList<>();
    LogPage.parse(line, into);
    return into;
  }

  @Test
  void stepAndLossAreReadFromTheCommonTrainerFormats() {
    assertEquals(List.of(new LogPage.StepLoss(3, 0.41)), points("step:3 - actor/pg_loss:0.41 - critic/score:1.0"));
    assertEquals(List.of(new LogPage.StepLoss(3, 0.41)), points("Step 3/10: loss=0.41"));
    assertEquals(List.of(new LogPage.StepLoss(12, 2.5e-3)), points("[trinity] step 12: actor/loss=2.5e-3"));
    // No step number, a loss before the step, or a global_step path: not a point.
    assertEquals(List.of(), points("loss=0.4"));
    assertEquals(List.of(), points("loss=0.4 at step 3"));
    assertEquals(List.of(), points("Saved checkpoint to /ckpt/global_step_3/actor loss"));
    assertEquals(List.of(), points("step 99999999999999999999999 loss 1.0"));
  }

  @Test
  void pagesAreWholeLinesAndATrailingNewlineIsNoLine() {
    LogPage page = LogPage.of("job-1-a", "ray-jobs", "a\nb\r\nc\n", 1, 5);
    assertEquals(List.of("b", "c"), page.lines());
    assertEquals(3, page.totalLines());
    assertEquals(3, page.nextOffset());
    LogPage beyond = LogPage.of("job-1-a", "ray-jobs", "a\nb\n", 7, 5);
    assertEquals(List.of(), beyond.lines());
    assertEquals(2, beyond.nextOffset());
    assertEquals(0, LogPage.of("job-1-a", "ray-jobs", "", 0, 5).totalLines());
  }

  @Test
  void badPageParametersNameTheParameterAndTheRange() {
    assertEquals(200, LogPage.param("limit", Optional.empty(), 200, 2000));
    assertEquals(7, LogPage.param("offset", Optional.of("7"), 0, Integer.MAX_VALUE));
    BadRequest e = assertThrows(BadRequest.class, () -> LogPage.param("limit", Optional.of("2001"), 200, 2000));
    assertEquals("limit must be an integer from 0 to 2000", e.getMessage());
    BadRequest phone = assertThrows(BadRequest.class,
        () -> LogPage.param("offset", Optional.of("13812345678"), 0, Integer.MAX_VALUE));
    assertEquals("offset must be an integer from 0 to 2147483647", phone.getMessage(), "what was sent is not echoed");
    assertThrows(BadRequest.class, () -> LogPage.param("offset", Optional.of("-1"), 0, 10));
    assertThrows(BadRequest.class, () -> LogPage.param("offset", Optional.of("1e3"), 0, 10));
  }
}
