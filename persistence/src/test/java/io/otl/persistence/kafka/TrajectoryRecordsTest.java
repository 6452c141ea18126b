package io.otl.persistence.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionModel.Counts;
import io.otl.core.session.SessionModel.Outcome;
import io.otl.core.session.SessionModel.Role;
import io.otl.core.session.SessionModel.TaskStatus;
import io.otl.persistence.export.JsonlFormats;
import io.otl.persistence.export.Trajectory;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A trajectories record is the exporter's SFT line of the same session plus its own fields (design §7.2). */
class TrajectoryRecordsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Instant T = Instant.parse("2026-01-01T00:00:00Z");

  @Test
  void recordIsTheSftLineOfTheSessionPlusRewardQualityAndModelVersion() throws Exception {
    AgentSession.TrajectoryCompleted done = new AgentSession.TrajectoryCompleted("completed", T, T, "agent-a", "v3",
        0.75, 0.9, new Counts(3, 1, 0, 0), new Outcome(TaskStatus.SUCCESS, null, 0, 0, 0, 300.0));
    Trajectory t = new Trajectory.Builder("s-1")
        .add(new AgentSession.SessionStarted("st", T, T, "agent-a", "1", "v3", Map.of()))
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, "Weather in Paris?", null, null))
        .add(new AgentSession.MessageRecorded("m2", T, T, Role.assistant, "Let me look.", null, null))
        .add(new AgentSession.ToolCallRecorded("t1", T, T, "c1", "weather", JSON.readTree("{\"city\":\"Paris\"}"),
            JSON.readTree("{\"temp\":21}"), true, 10L))
        .add(new AgentSession.MessageRecorded("m3", T, T, Role.assistant, "21 degrees.", "chatcmpl-1", 300L))
        .add(new AgentSession.TaskResultRecorded("r", T, T, TaskStatus.SUCCESS, "ok"))
        .add(done)
        .build();

    ObjectNode record = (ObjectNode) JSON.readTree(TrajectoryRecords.json("s-1", done, t));
    JsonNode sft = JSON.readTree(JsonlFormats.sft(t).orElseThrow());

    assertEquals(sft.get("messages"), record.get("messages"), "messages as the SFT export renders them");
    assertEquals(sft.get("tools"), record.get("tools"), "tools as the SFT export renders them");
    assertTrue(record.get("tools").isArray(), "tools is a JSON array, as in the SFT line");
    assertTrue(record.get("messages").get(1).has("tool_calls"), "tool calls are part of the record");
    assertEquals(0.75, record.get("reward").asDouble(), 1e-9);
    assertEquals(0.9, record.get("qualityScore").asDouble(), 1e-9);
    assertTrue(record.has("quality"), "design §7.2 names the field quality: " + record.fieldNames());
    assertEquals(0.9, record.get("quality").asDouble(), 1e-9);
    assertEquals("v3", record.get("modelVersion").asText());
    assertEquals("s-1:completed", record.get("id").asText());
    assertEquals(false, record.get("revision").asBoolean());
  }
}
