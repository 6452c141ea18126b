package io.otl.http.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.core.session.Desensitizer;
import io.otl.core.session.SessionInput;
import io.otl.http.Json;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A model's refusal (OpenAI's {@code message.refusal} / {@code delta.refusal}, no content) is the
 * model's turn as the agent saw it. It was recorded as an empty answer, so the conversation lost it
 * and the SFT line put the agent's next user message right after the refused one.
 */
class RefusalRecordingTest {
  private static final Desensitizer D = new Desensitizer(true, List.of("phone", "email", "id_card"), List.of());
  private static final String REFUSED = "[{\"role\":\"user\",\"content\":\"do it\"}]";

  private static List<SessionInput> record(Set<String> known, String messages, Completion answer) {
    ChatRequest request = ChatRequest.parse(("{\"model\":\"m\",\"messages\":" + messages + "}")
        .getBytes(StandardCharsets.UTF_8));
    List<SessionInput> in = TurnRecorder.inputs(D, new TextCut(D, 65_536), known, request, "v1", "v1", null, null,
        new TurnRecorder.Outcome(answer, false, null, 5, 9));
    in.forEach(i -> known.add(i.eventId()));
    return in;
  }

  private static Completion response(String message) throws Exception {
    return Completion.ofResponse(Json.MAPPER.readTree("{\"id\":\"r-" + message.hashCode() + "\",\"choices\":"
        + "[{\"index\":0,\"message\":" + message + ",\"finish_reason\":\"stop\"}]}"), false);
  }

  private static List<String> contents(List<SessionInput> in) {
    return in.stream().filter(i -> i instanceof SessionInput.Message).map(i -> ((SessionInput.Message) i).content())
        .toList();
  }

  /** The refused turn, then the agent's next request resending it as its client returned it. */
  private static void refusalThenNextTurn(Completion refusal, String resent) throws Exception {
    Set<String> known = new HashSet<>();
    assertEquals(List.of("do it", "I can't help with that."), contents(record(known, REFUSED, refusal)));
    String next = "[{\"role\":\"user\",\"content\":\"do it\"}," + resent + ",{\"role\":\"user\",\"content\":\"ok, hi\"}]";
    assertEquals(List.of("ok, hi", "hi"), contents(record(known, next,
        response("{\"role\":\"assistant\",\"content\":\"hi\"}"))), "the resent refusal is the recorded turn");
  }

  @Test
  void aRefusalIsRecordedAsTheModelsTurn() throws Exception {
    refusalThenNextTurn(response("{\"role\":\"assistant\",\"content\":null,\"refusal\":\"I can't help with that.\"}"),
        "{\"role\":\"assistant\",\"refusal\":\"I can't help with that.\"}");
  }

  @Test
  void aStreamedRefusalIsRecordedToo() throws Exception {
    Completion c = new Completion(false);
    String chunk = "data: {\"id\":\"r-s\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"%s\"},\"finish_reason\":%s}]}\n\n";
    c.feed((String.format(chunk, "I can't ", "null") + String.format(chunk, "help with that.", "\"stop\"")
        + "data: [DONE]\n\n").getBytes(StandardCharsets.UTF_8), 1);
    refusalThenNextTurn(c, "{\"role\":\"assistant\",\"content\":[{\"type\":\"refusal\","
        + "\"refusal\":\"I can't help with that.\"}]}");
  }
}
