package io.otl.core.training;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The port's records travel in events and replies: they must survive Pekko's Jackson serializer. */
class TrainingRecordsSerializationTest {

  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    testKit = ActorTestKit.create("TrainingRecordsSerializationTest");
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void recordsRoundTripThroughJacksonJson() {
    var spec =
        new TrainingJobSpec(
            "job-1", "agent-1", "sft", "qwen2.5-7b-instruct",
            Map.of("learning-rate", 2e-5, "epochs", 3), "/d/job-1.jsonl", "/ckpt", Map.of("k", "v"));
    var output = new OutputModel("file:///ckpt/agent-1/job-1/global_step_30/actor/huggingface", Map.of("task-success-rate", 0.9));
    for (Object o :
        new Object[] {
          spec,
          new BackendSubmission("job-1"),
          new BackendJobStatus(BackendJobStatus.State.SUCCEEDED, "done", output),
          new BackendJobStatus(BackendJobStatus.State.FAILED, "boom", null),
          new ProxyMetrics(Map.of(0, 3, 1, 2), 10, 8, 4)
        }) {
      assertEquals(o, testKit.serializationTestKit().verifySerialization(o, true));
    }
  }

  @Test
  void outputModelOnlyWithSuccess() {
    assertThrows(
        IllegalArgumentException.class,
        () -> new BackendJobStatus(BackendJobStatus.State.RUNNING, "", new OutputModel("file:///x", Map.of())));
    assertEquals(3, new ProxyMetrics(Map.of(0, 3, 1, 2), 0, 0, 0).latestModelVersion());
  }
}
