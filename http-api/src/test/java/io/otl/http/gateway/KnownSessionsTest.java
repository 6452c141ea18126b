package io.otl.http.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class KnownSessionsTest {
  @Test
  void aRecordingAddsItsIdsToWhatTheSessionWasKnownToHold() {
    KnownSessions known = new KnownSessions(10);
    known.recorded("s1", "agent-a", "v0", Set.of("gw:start"), List.of("gw:m:1", "gw:m:2"));
    known.recorded("s1", "agent-a", "v1", Set.of(), List.of("gw:m:3"));
    KnownSessions.Entry e = known.get("s1");
    assertEquals("agent-a", e.owner());
    assertEquals(Set.of("gw:start", "gw:m:1", "gw:m:2", "gw:m:3"), e.eventIds());
    assertFalse(e.completed());
    assertEquals("v0", e.version(), "a session keeps the version it started on");
  }

  @Test
  void aCompletionIsNotedAndAForgottenSessionIsAskedAgain() {
    KnownSessions known = new KnownSessions(10);
    known.learned("s1", "agent-a", "v1", Set.of("x"), false);
    known.completed("s1");
    assertTrue(known.get("s1").completed());
    assertEquals("agent-a", known.get("s1").owner(), "the owner stays");
    assertEquals("v1", known.get("s1").version(), "and so does the version");
    known.forget("s1");
    assertNull(known.get("s1"));
  }

  @Test
  void theFirstClaimOfAnUnknownSessionHoldsAndALaterOneSeesIt() {
    KnownSessions known = new KnownSessions(10);
    assertNull(known.claim("s1", "agent-a", "v1"), "claimed");
    assertEquals("agent-a", known.claim("s1", "agent-b", "v0").owner(), "agent-b sees agent-a's claim");
    known.recorded("s1", "agent-a", "v1", Set.of(), List.of("gw:m:1"));
    assertEquals(Set.of("gw:m:1"), known.claim("s1", "agent-a", "v0").eventIds());
    assertEquals("v1", known.get("s1").version(), "the claim's version, the one its first call was routed to");
  }

  @Test
  void aSessionWithoutOwnerIsNotRemembered() {
    KnownSessions known = new KnownSessions(10);
    known.learned("s1", null, "v0", Set.of(), false);
    assertNull(known.get("s1"));
  }

  @Test
  void theLeastRecentlyUsedSessionsAreForgottenFirstAndLongSessionsKeepTheirOwnerOnly() {
    KnownSessions known = new KnownSessions(2);
    known.learned("old", "a", "v0", Set.of(), false);
    known.learned("used", "a", "v0", Set.of(), false);
    assertNotNull(known.get("old"));
    known.learned("new", "a", "v0", Set.of(), false);
    assertNull(known.get("used"), "least recently used");
    assertNotNull(known.get("old"));
    Set<String> many = IntStream.range(0, KnownSessions.MAX_IDS + 1).mapToObj(i -> "id" + i).collect(Collectors.toSet());
    known.learned("long", "a", "v0", many, false);
    assertEquals("a", known.get("long").owner());
    assertEquals(Set.of(), known.get("long").eventIds(), "beyond the cap the history is resent, the session drops it");
  }
}
