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
    known.recorded("s1", "agent-a", "v0", Set.of("gw:start"), null, List.of("gw:m:1", "gw:m:2"), null);
    KnownSessions.Entry first = known.get("s1");
    assertEquals("gw:m:2", first.lastMessage());
    known.recorded("s1", "agent-a", "v1", first.eventIds(), first.lastMessage(), List.of("gw:m:3", "gw:f:x"), null);
    KnownSessions.Entry e = known.get("s1");
    assertEquals("agent-a", e.owner());
    assertEquals(Set.of("gw:start", "gw:m:1", "gw:m:2", "gw:m:3", "gw:f:x"), e.eventIds());
    assertEquals("gw:m:3", e.lastMessage(), "a failed call's id is no message to align on");
    assertFalse(e.completed());
    assertEquals("v0", e.version(), "a session keeps the version it started on");
  }

  /**
   * What the session held unknown (it did not answer the recording), or more ids than the memory
   * keeps: no last message, so that the next recording asks the session instead of numbering
   * recurring messages against a part of its ids (they got ids the session had, and were lost).
   */
  @Test
  void aPartialViewOfTheSessionKeepsNoLastMessage() {
    KnownSessions known = new KnownSessions(10);
    known.recorded("s1", "agent-a", "v0", null, null, List.of("gw:m:1"), null);
    assertNull(known.get("s1").lastMessage());
    assertEquals(Set.of("gw:m:1"), known.get("s1").eventIds());
    Set<String> many = IntStream.range(0, KnownSessions.MAX_IDS).mapToObj(i -> "id" + i).collect(Collectors.toSet());
    known.recorded("s2", "agent-a", "v0", many, "id9", List.of("gw:m:a"), null);
    assertNull(known.get("s2").lastMessage(), "past the cap");
    assertEquals(Set.of(), known.get("s2").eventIds());
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
    known.recorded("s1", "agent-a", "v1", Set.of(), null, List.of("gw:m:1"), null);
    assertEquals(Set.of("gw:m:1"), known.claim("s1", "agent-a", "v0").eventIds());
    assertEquals("v1", known.get("s1").version(), "the claim's version, the one its first call was routed to");
  }

  /**
   * The gateway claims an unknown session before routing its call (so a second agent's concurrent first
   * call is refused unrouted): the claim holds no version until the route gives one, and a call that
   * could not be routed gives the session back.
   */
  @Test
  void aClaimWithoutVersionGetsItsRoutedVersionOrIsGivenBack() {
    KnownSessions known = new KnownSessions(10);
    assertNull(known.claim("s1", "agent-a", null));
    assertEquals("agent-a", known.claim("s1", "agent-b", null).owner(), "agent-b is refused before routing");
    known.startedOn("s1", "agent-b", "v9");
    assertNull(known.get("s1").version(), "only the claimer sets the version");
    known.startedOn("s1", "agent-a", "v1");
    assertEquals("v1", known.get("s1").version());
    known.startedOn("s1", "agent-a", "v2");
    assertEquals("v1", known.get("s1").version(), "a session keeps the version it started on");
    assertNull(known.claim("s2", "agent-a", null));
    known.unclaim("s2", "agent-b");
    assertEquals("agent-a", known.get("s2").owner(), "only the claimer gives it back");
    known.unclaim("s2", "agent-a");
    assertNull(known.get("s2"), "an unrouted call leaves the session nobody's");
    known.unclaim("s1", "agent-a");
    assertEquals("v1", known.get("s1").version(), "a routed claim is not given back");
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
