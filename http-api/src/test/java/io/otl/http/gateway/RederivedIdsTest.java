package io.otl.http.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.session.AgentSession;
import io.otl.core.session.Desensitizer;
import io.otl.core.session.SessionModel.Role;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A session's stored gateway messages under rules changed since they were recorded: each id maps to
 * the one today's rules give, numbered in the stored order, and asking again (a long session is
 * re-derived on every turn, from memory) gives the same answer.
 */
class RederivedIdsTest {
  private static final Desensitizer BEFORE = new Desensitizer(true, Desensitizer.BUILT_IN, List.of());
  private static final Desensitizer TODAY = new Desensitizer(true, Desensitizer.BUILT_IN, List.of("secretword\\d+"));

  private static AgentSession.MessageRecorded stored(String content, int occurrence) {
    String id = TurnRecorder.numbered(TurnRecorder.messageHash(BEFORE, "user", content, List.of()), occurrence);
    Instant at = Instant.parse("2026-12-05T10:00:00Z");
    return new AgentSession.MessageRecorded(id, at, at, Role.user, content, null, null, null, null);
  }

  private static String today(String content, int occurrence) {
    return TurnRecorder.numbered(TurnRecorder.messageHash(TODAY, "user", content, List.of()), occurrence);
  }

  @Test
  void storedIdsMapToTodaysInTheirOrderAndTheSameAgain() {
    var secret = stored("my code secretword42", 0);
    var plain = stored("hello", 0);
    var secretAgain = stored("my code secretword42", 1);
    RederivedIds ids = new RederivedIds(TODAY);
    Map<String, String> first = ids.of(List.of(secret, plain, secretAgain));
    assertEquals(Map.of(secret.eventId(), today("my code secretword42", 0),
        secretAgain.eventId(), today("my code secretword42", 1)), first);
    assertEquals(today("my code [REDACTED]", 1), first.get(secretAgain.eventId()), "as the resent text hashes today");
    assertEquals(first, ids.of(List.of(secret, plain, secretAgain)));
    assertEquals(Map.of(), new RederivedIds(BEFORE).of(List.of(secret, plain, secretAgain)), "unchanged rules: no change");
  }
}
