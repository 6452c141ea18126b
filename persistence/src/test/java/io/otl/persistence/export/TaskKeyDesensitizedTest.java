package io.otl.persistence.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionModel.Role;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A client taskId holding personal data is stored desensitized ({@code alice@example.com} and
 * {@code bob@example.com} both as {@code [EMAIL]}), so it no longer tells tasks apart: trial t148's DPO file
 * paired Bob's "No." with Alice's question as one task. Such an id is no task key; the prompt is.
 */
class TaskKeyDesensitizedTest {
  private static final Instant T = Instant.parse("2026-12-07T03:00:00Z");

  private static Trajectory session(String id, String storedTaskId, String question) {
    return new Trajectory.Builder(id)
        .add(new AgentSession.SessionStarted("st", T, T, "agent-a", "1", "v0", Map.of("taskId", storedTaskId)))
        .add(new AgentSession.MessageRecorded("m1", T, T, Role.user, question, null, null)).build();
  }

  @Test
  void aTaskIdWhosePersonalDataWasReplacedNamesNoTask() {
    Trajectory alice = session("a", "[EMAIL]", "Where is my refund?");
    Trajectory bob = session("b", "[EMAIL]", "Cancel my order");
    assertNotEquals(TaskKey.of(alice), TaskKey.of(bob));
    // The same stored id and the same question (normalised) are one task; what is left of the id still parts tasks.
    assertEquals(TaskKey.of(alice), TaskKey.of(session("c", "[EMAIL]", "where is my  refund?")));
    assertNotEquals(TaskKey.of(session("d", "ticket-42-[EMAIL]", "Where is my refund?")),
        TaskKey.of(session("e", "ticket-43-[EMAIL]", "Where is my refund?")));
    for (String placeholder : new String[] {"[PHONE]", "[ID_CARD]", "[BANK_CARD]", "[IBAN]", "[SECRET]", "[REDACTED]"}) {
      String key = TaskKey.of(session("f", "t-" + placeholder, "Where is my refund?")).orElseThrow();
      assertEquals("task:t-" + placeholder + "|" + TaskKey.of(session("g", "", "Where is my refund?")).orElseThrow(),
          key, placeholder);
    }
  }

  @Test
  void anOrdinaryTaskIdStillNamesTheTask() {
    assertEquals("task:T-7", TaskKey.of(session("a", "T-7", "one wording")).orElseThrow());
    assertEquals("task:[draft] T-8", TaskKey.of(session("b", "[draft] T-8", "x")).orElseThrow());
  }
}
