package io.otl.core.session;

import static io.otl.core.session.RecordPlannerRefusalsTest.FULL;
import static io.otl.core.session.RecordPlannerRefusalsTest.NOW;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.otl.core.session.AgentSession.Event;
import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.AgentSession.Recorded;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.RecordPlanner.Store;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A gateway answer whose id a stored answer already has (the same text, numbered by a request that no
 * longer resends the stored one: an edited turn, or a slid window on a node that does not know the
 * session's ids) is a new answer when its msgId differs and its request brought something new: stored
 * under the next occurrence's id, not dropped as a duplicate (trial t73). The same answer sent again, and
 * a request with nothing new (a retry of a recorded turn), stay duplicates.
 */
class RecordPlannerAnotherAnswerTest {
  private static final String HASH = "ab12cd34ef56ab12cd34ef56";
  private final RecordPlanner planner = new RecordPlanner("s1", FULL);
  private State state = State.empty();

  private Store record(SessionInput... inputs) {
    Store store = assertInstanceOf(Store.class, planner.plan(state, "a1", List.of(inputs), NOW));
    for (Event e : store.events()) state = state.apply(e);
    return store;
  }

  private static SessionInput.Message answer(String eventId, String msgId) {
    return new SessionInput.Message(eventId, NOW, "assistant", "It is sunny.", msgId, 12L);
  }

  private static SessionInput.Message question(String text) {
    return new SessionInput.Message("gw:m:q" + text.length(), NOW, "user", text, null, null);
  }

  private MessageRecorded stored(String eventId) {
    return state.messages().stream().filter(m -> m.eventId().equals(eventId)).findFirst().orElse(null);
  }

  @Test
  void aNewAnswerWithAStoredAnswersIdIsStoredUnderTheNextOccurrence() {
    String id = GatewayMessageIds.numbered(HASH, 0);
    record(new SessionInput.Message("gw:m:user", NOW, "user", "weather?", null, null), answer(id, "chatcmpl-1"));
    Store again = record(question("again?"), answer(id, "chatcmpl-2"));
    assertEquals(new Recorded(2, 0, true), again.reply());
    assertEquals("chatcmpl-1", stored(id).msgId(), "the stored answer is unchanged");
    assertEquals("chatcmpl-2", stored(GatewayMessageIds.numbered(HASH, 1)).msgId());
    Store third = record(question("and again?"), answer(id, "chatcmpl-3"));
    assertEquals(new Recorded(2, 0, true), third.reply());
    assertEquals("chatcmpl-3", stored(GatewayMessageIds.numbered(HASH, 2)).msgId(), "past every held occurrence");
  }

  @Test
  void theSameAnswerSentAgainAndHistoryWithoutAMsgIdStayDuplicates() {
    String id = GatewayMessageIds.numbered(HASH, 0);
    record(answer(id, "chatcmpl-1"));
    assertEquals(new Recorded(0, 1, true), record(answer(id, "chatcmpl-1")).reply(), "a retried recording");
    assertEquals(new Recorded(0, 1, true), record(answer(id, null)).reply(), "the answer resent as history");
    assertNull(stored(GatewayMessageIds.numbered(HASH, 1)));
  }

  @Test
  void aRequestWithNothingNewIsARetryAndItsAnswerIsTheRecordedTurns() {
    // An agent that sends no history and asks the same question again: documented as a retry.
    String id = GatewayMessageIds.numbered(HASH, 0);
    record(question("weather?"), answer(id, "chatcmpl-1"));
    assertEquals(new Recorded(0, 2, true), record(question("weather?"), answer(id, "chatcmpl-2")).reply());
    assertEquals(2, state.messages().size());
  }

  @Test
  void onlyGatewayMessageIdsAreRenumbered() {
    // A client's own event id is its idempotency key: the second is a duplicate, whatever its msgId.
    record(answer("client-7", "r1"));
    assertEquals(new Recorded(1, 1, true), record(question("new?"), answer("client-7", "r2")).reply());
    assertEquals(2, state.messages().size());
  }

  @Test
  void theNextOccurrenceOfASpelledOutHashIsTheOneTheGatewayWouldNumber() {
    // A hash whose digits read as a phone number is written with letters; its next id is numbered from
    // the hash itself, as the gateway numbers the message when a later request resends it.
    String phoneLike = "a13800138000bcdef0123456"; // 13800138000 is a mobile number
    String first = GatewayMessageIds.numbered(phoneLike, 0);
    assertEquals("gw:m:ahjogghjogggbcdefghijklm", first, "the hash is spelled out");
    assertEquals(GatewayMessageIds.numbered(phoneLike, 1), GatewayMessageIds.nextFree(first, Set.of(first)::contains));
    assertEquals(GatewayMessageIds.numbered(phoneLike, 3), GatewayMessageIds.nextFree(first,
        Set.of(first, GatewayMessageIds.numbered(phoneLike, 1), GatewayMessageIds.numbered(phoneLike, 2))::contains));
    assertEquals("gw:m:" + HASH + ".1:partial", GatewayMessageIds.nextFree("gw:m:" + HASH + ":partial", Set.of()::contains));
    assertNull(GatewayMessageIds.nextFree("gw:m:test", Set.of()::contains), "not the gateway's form: never renumbered");
  }

  @Test
  void theNewAnswersReasoningMovesWithIt() {
    String id = GatewayMessageIds.numbered(HASH, 0);
    record(question("weather?"), new SessionInput.Reasoning(id + ":r", NOW, null, "think one", null, null),
        answer(id, "chatcmpl-1"));
    String next = GatewayMessageIds.numbered(HASH, 1);
    Store again = record(question("again?"), new SessionInput.Reasoning(id + ":r", NOW, null, "think two", null, null),
        answer(id, "chatcmpl-2"));
    assertEquals(new Recorded(3, 0, true), again.reply());
    assertEquals("chatcmpl-2", stored(next).msgId());
    assertEquals(List.of("think one", "think two"),
        state.steps().stream().map(AgentSession.ReasoningStepRecorded::thought).toList());
    assertEquals(next + ":r", state.steps().get(1).eventId());
  }

  @Test
  void anAnswerCutShortTwiceIsStoredTwice() {
    String partial = GatewayMessageIds.numbered(HASH, 0) + ":partial";
    record(question("weather?"), answer(partial, "chatcmpl-1"));
    assertEquals(new Recorded(2, 0, true), record(question("again?"), answer(partial, "chatcmpl-2")).reply());
    assertEquals("chatcmpl-2", stored(GatewayMessageIds.numbered(HASH, 1) + ":partial").msgId());
  }

  @Test
  void aClientsOwnIdUnderTheGatewayPrefixIsItsIdempotencyKey() {
    // Any id under gw:m: an events-API client sends that is not of the gateway's form: a duplicate, as
    // before, never a failure of the session (a null id crashed it: review t75).
    record(answer("gw:m:test", "r1"));
    assertEquals(new Recorded(1, 1, true), record(question("new?"), answer("gw:m:test", "r2")).reply());
    assertEquals("r1", stored("gw:m:test").msgId());
  }
}
