package io.otl.core.session;

import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.AgentSession.State;
import io.otl.core.session.SessionModel.Role;
import io.otl.core.session.SessionModel.Status;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * New gateway answers that a request numbered onto a stored answer's id, and the ids they are stored
 * under instead ({@link GatewayMessageIds#nextFree}). An answer is numbered by the request it answers,
 * so one with the text of a stored answer the request no longer resends (the agent edited that turn,
 * or a node that does not know the session's ids numbered a slid window) got that answer's id, and the
 * session dropped it as a duplicate, silently (trial t73). Its reasoning step ({@code <answer>:r}, sent
 * before it) moves with it, or the new answer would be stored without the thinking that led to it.
 */
final class AnotherAnswers {
  private static final String REASONING = ":r";

  private AnotherAnswers() {}

  /**
   * Old id → new id for this request's inputs; empty when none needs one. An answer is another one
   * when its msgId differs from the stored answer's under the same id and something new to the session
   * comes before it in the request: a request with nothing new is a retry of a recorded turn
   * (docs/gateway.md), whose answer is that turn's and is stored once.
   */
  static Map<String, String> of(State state, List<SessionInput> inputs, Desensitizer desensitizer) {
    if (state.status() == Status.COMPLETED || !anyHeldAnswer(state, inputs)) return Map.of();
    Map<String, String> renames = new HashMap<>();
    boolean somethingNew = false;
    for (SessionInput input : inputs) {
      String id = input.eventId() != null ? input.eventId() : DerivedEventIds.of(input, desensitizer);
      if (somethingNew && isAnotherAnswer(state, input, id, desensitizer)) {
        // the session's ids and those this request's renames took: two new answers must not take one id
        String next = GatewayMessageIds.nextFree(id, held -> state.eventIds().contains(held)
            || renames.containsValue(held));
        if (next != null) {
          renames.put(id, next);
          renames.put(id + REASONING, next + REASONING);
        }
        continue;
      }
      boolean held = state.eventIds().contains(id)
          || input.formerId() != null && state.eventIds().contains(input.formerId());
      if (!held && !id.endsWith(REASONING)) somethingNew = true;
    }
    return renames;
  }

  /** Whether any input is an answer with a gateway message id the session holds (the usual request has none). */
  private static boolean anyHeldAnswer(State state, List<SessionInput> inputs) {
    for (SessionInput input : inputs) {
      if (input instanceof SessionInput.Message m && !RecordPlanner.noMsgId(m.msgId()) && m.eventId() != null
          && m.eventId().startsWith(GatewayMessageIds.PREFIX) && state.eventIds().contains(m.eventId())) {
        return true;
      }
    }
    return false;
  }

  private static boolean isAnotherAnswer(State state, SessionInput input, String eventId, Desensitizer d) {
    if (!(input instanceof SessionInput.Message m) || RecordPlanner.noMsgId(m.msgId())
        || !eventId.startsWith(GatewayMessageIds.PREFIX) || Role.parse(m.role()) != Role.assistant
        || !state.eventIds().contains(eventId)) {
      return false;
    }
    String sent = d.applyToId(m.msgId());
    for (MessageRecorded stored : state.messages()) {
      if (stored.eventId().equals(eventId)) return stored.msgId() != null && !stored.msgId().equals(sent);
    }
    return false;
  }
}
