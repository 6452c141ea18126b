package io.otl.http.otlp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.session.SessionInput;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Where a chat span's messages go when the session already holds some of the conversation: a whole
 * history keeps the ids its span alone gives (those earlier builds stored), also when it does not agree
 * with what is stored (an answer generated again, a second choice); a window is moved to where the session
 * holds its messages; a window that finds nothing stored keeps its own positions, as before.
 */
class ConversationAlignmentTest {
  private static int spans;

  private static String text(String role, String content) {
    return "{\"role\":\"" + role + "\",\"parts\":[{\"type\":\"text\",\"content\":\"" + content + "\"}]}";
  }

  private static String messages(String... m) {
    return "[" + String.join(",", m) + "]";
  }

  private static GenAiMapper.SessionBatch chat(String input, String output) {
    spans++;
    OtlpSpan span = new OtlpSpan(String.format("%032x", spans), String.format("%016x", spans), "", "chat",
        1_700_000_000_000_000_000L + spans, 1_700_000_000_100_000_000L + spans,
        Map.of("gen_ai.operation.name", "chat", "gen_ai.conversation.id", "c", "gen_ai.agent.name", "a",
            "gen_ai.input.messages", input, "gen_ai.output.messages", output),
        List.of(), 0, null, Map.of());
    return GenAiMapper.map(List.of(span)).sessions().get(0);
  }

  private static List<String> messageIds(List<SessionInput> inputs) {
    List<String> ids = new ArrayList<>();
    for (SessionInput in : inputs) if (in instanceof SessionInput.Message) ids.add(in.eventId());
    return ids;
  }

  private static List<String> positions(List<SessionInput> inputs) {
    return messageIds(inputs).stream().map(id -> id.substring("otlp:m".length(), id.indexOf(':', 6))).toList();
  }

  /** Stores the batch's placed inputs into {@code held}; returns them. */
  private static List<SessionInput> store(GenAiMapper.SessionBatch batch, Set<String> held) {
    List<SessionInput> placed = batch.aligned(held);
    for (SessionInput in : placed) held.add(in.eventId());
    return placed;
  }

  @Test
  void aWholeHistoryThatDisagreesWithTheSessionKeepsItsOwnIds() {
    Set<String> held = new LinkedHashSet<>();
    String sys = text("system", "Be brief.");
    String u1 = text("user", "Hi");
    store(chat(messages(sys, u1), messages(text("assistant", "Hello"), text("assistant", "Hey"))), held);
    // the answer generated again: a new answer where the first one was, as before
    GenAiMapper.SessionBatch regenerated = chat(messages(sys, u1), messages(text("assistant", "Hello there")));
    assertEquals(messageIds(regenerated.inputs()), messageIds(store(regenerated, held)));
    // the next turn goes on from the first choice; the second choice sits where its question is now
    GenAiMapper.SessionBatch next = chat(messages(sys, u1, text("assistant", "Hello"), text("user", "Bye")),
        messages(text("assistant", "Bye!")));
    assertEquals(messageIds(next.inputs()), messageIds(store(next, held)));
  }

  @Test
  void aWindowGoesWhereTheSessionHoldsItsMessagesKeepingItsHead() {
    Set<String> held = new LinkedHashSet<>();
    String sys = text("system", "Be brief.");
    String task = text("user", "Task: plan a trip.");
    store(chat(messages(sys, task, text("user", "Start")), messages(text("assistant", "Where to?"))), held);
    store(chat(messages(sys, task, text("user", "Start"), text("assistant", "Where to?"), text("user", "Rome")),
        messages(text("assistant", "Three days?"))), held);
    // the system prompt and the task pinned, then the last two messages
    List<SessionInput> placed = store(chat(messages(sys, task, text("assistant", "Three days?"),
        text("user", "Yes")), messages(text("assistant", "Done."))), held);
    assertEquals(List.of("0", "1", "5", "6", "7"), positions(placed));
  }

  @Test
  void aWindowThatFindsNothingStoredKeepsItsOwnPositions() {
    Set<String> held = new LinkedHashSet<>();
    String sys = text("system", "Be brief.");
    store(chat(messages(sys, text("user", "Hi")), messages(text("assistant", "Hello"))), held);
    // turns in between never exported: nothing to place it by
    GenAiMapper.SessionBatch late = chat(messages(sys, text("assistant", "Sure."), text("user", "Thanks")),
        messages(text("assistant", "Bye")));
    assertEquals(messageIds(late.inputs()), messageIds(store(late, held)));
  }

  /**
   * A session of thousands of identical messages and a span that contradicts it only at its end: every
   * shift matched most of the span, so placing it compared tens of millions of messages per request. The
   * search stops after {@link ConversationAlignment#MAX_COMPARISONS}; the span keeps its own positions.
   */
  @Test
  void aConversationOfThousandsOfRepeatsIsPlacedWithinTheComparisonBudget() {
    Set<String> held = new LinkedHashSet<>();
    List<String> same = new ArrayList<>();
    for (int i = 0; i < 3000; i++) same.add(text("user", "continue"));
    List<String> stored = new ArrayList<>(same);
    stored.add(text("user", "Y"));
    store(chat(messages(stored.toArray(String[]::new)), messages(text("assistant", "ok"))), held);
    List<String> contradicting = new ArrayList<>(same);
    contradicting.add(text("user", "X"));
    GenAiMapper.SessionBatch span = chat(messages(contradicting.toArray(String[]::new)), messages(text("assistant", "ok")));
    assertEquals(messageIds(span.inputs()), messageIds(span.aligned(held)));
  }
}
