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
 * An SDK's retry of a later turn (the gateway knows the last message it recorded) after a failed or cut-short
 * call: the question asked again by the retry is not another question. Guards alignedCounts' numbering of a
 * message after the last one recorded (trial t110) against taking a retry for a question asked again: the failed
 * or partial attempt stored the question, which is then the last message recorded (review t116).
 */
class TurnRecorderRetryTest {
  private static final Desensitizer D = new Desensitizer(true, List.of("phone", "email", "id_card"), List.of());

  private static ChatRequest request(String messages) {
    return ChatRequest.parse(("{\"model\":\"m\",\"messages\":" + messages + "}").getBytes(StandardCharsets.UTF_8));
  }

  private static TurnRecorder.Outcome answer(String content, boolean aborted) throws Exception {
    Completion c = Completion.ofResponse(Json.MAPPER.readTree("{\"id\":\"r-" + content.hashCode() + "\",\"choices\":"
        + "[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"" + content + "\"},\"finish_reason\":\"stop\"}]}"),
        false);
    return new TurnRecorder.Outcome(c, aborted, null, 5, 9);
  }

  private final Set<String> known = new HashSet<>();
  private String last;

  private List<String> turn(String messages, TurnRecorder.Outcome outcome) {
    List<SessionInput> in = TurnRecorder.inputs(D, new TextCut(D, 65_536), known, last, request(messages),
        "v1", null, "v1", null, null, outcome, null, null);
    in.forEach(i -> known.add(i.eventId()));
    last = TurnRecorder.lastMessage(in.stream().map(SessionInput::eventId).toList(), last);
    return in.stream().filter(i -> i instanceof SessionInput.Message).map(i -> ((SessionInput.Message) i).content())
        .toList();
  }

  private static final String SYS = "{\"role\":\"system\",\"content\":\"be brief\"}";
  private static final String Q1 = "{\"role\":\"user\",\"content\":\"q1\"}";
  private static final String A1 = "{\"role\":\"assistant\",\"content\":\"a1\"}";
  private static final String Q2 = "{\"role\":\"user\",\"content\":\"q2\"}";

  @Test
  void anSdkRetryOfAFailedSecondTurnStoresTheQuestionOnce() throws Exception {
    assertEquals(List.of("be brief", "q1", "a1"), turn("[" + SYS + "," + Q1 + "]", answer("a1", false)));
    TurnRecorder.Outcome failed = new TurnRecorder.Outcome(null, false, "the model server answered HTTP 500", 0, 9);
    String r2 = "[" + SYS + "," + Q1 + "," + A1 + "," + Q2 + "]";
    assertEquals(List.of("q2", ""), turn(r2, failed), "first attempt: the question and a failed answer");
    assertEquals(List.of(""), turn(r2, failed), "the SDK's retry: another failed answer, the question once");
    assertEquals(List.of("a2"), turn(r2, answer("a2", false)), "the SDK's last retry: the answer");
  }

  @Test
  void aRetryAfterAnAnswerCutShortStoresTheQuestionOnce() throws Exception {
    assertEquals(List.of("be brief", "q1", "a1"), turn("[" + SYS + "," + Q1 + "]", answer("a1", false)));
    String r2 = "[" + SYS + "," + Q1 + "," + A1 + "," + Q2 + "]";
    assertEquals(List.of("q2", "a2 par"), turn(r2, answer("a2 par", true)), "the client left mid-stream");
    assertEquals(List.of("a2"), turn(r2, answer("a2", false)), "the client's retry: the question once");
  }
}
