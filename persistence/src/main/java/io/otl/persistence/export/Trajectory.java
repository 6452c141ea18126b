package io.otl.persistence.export;

import io.otl.core.session.AgentSession;
import io.otl.core.session.AgentSession.Event;
import io.otl.core.session.AgentSession.MessageDetailsAdded;
import io.otl.core.session.AgentSession.MessageRecorded;
import io.otl.core.session.AgentSession.ToolCallRecorded;
import io.otl.core.session.AgentSession.ToolResultRecorded;
import io.otl.core.session.SessionModel.Role;
import io.otl.core.session.Scoring;
import io.otl.core.session.SessionSettings.RewardWeights;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A session as replayed from the journal: the state folded with the entity's own handler
 * ({@link AgentSession.State#apply}), plus the order in which messages and tool calls happened
 * (the state keeps them in separate lists), and where in that order each response (an assistant
 * message with a {@code msgId}) began, so that feedback naming a response can be placed.
 */
public record Trajectory(String sessionId, AgentSession.State state, List<Event> conversation,
    Map<String, Integer> responseAt) {

  /** Folds events, in journal order, into a trajectory. */
  public static final class Builder {
    private final String sessionId;
    private AgentSession.State state = AgentSession.State.empty();
    private final List<Event> conversation = new ArrayList<>();
    private final Map<String, Integer> responseAt = new LinkedHashMap<>();

    public Builder(String sessionId) {
      this.sessionId = sessionId;
    }

    public Builder add(Event e) {
      state = state.apply(e);
      // A tool-calls-only response is bookkeeping (not in the conversation): it begins where its
      // calls, recorded after it, are.
      if (e instanceof MessageRecorded m && m.role() == Role.assistant && m.msgId() != null) {
        responseAt.putIfAbsent(m.msgId(), conversation.size());
      }
      if (e instanceof ToolCallRecorded || e instanceof MessageRecorded m && !gatewayBookkeeping(m)) {
        conversation.add(e);
      }
      if (e instanceof MessageDetailsAdded d) addDetails(d);
      if (e instanceof ToolResultRecorded r) addResult(r);
      return this;
    }

    /** The conversation as it would be had the call been stored with its result: the call in its place, answered. */
    private void addResult(ToolResultRecorded r) {
      for (int i = 0; i < conversation.size(); i++) {
        if (conversation.get(i) instanceof ToolCallRecorded c && c.eventId().equals(r.callEventId()) && c.pending()) {
          conversation.set(i, r.appliedTo(c));
          return;
        }
      }
    }

    /** The conversation as it would be had the details come with the message: the answer in its place, with its msgId. */
    private void addDetails(MessageDetailsAdded d) {
      for (int i = 0; i < conversation.size(); i++) {
        if (conversation.get(i) instanceof MessageRecorded m && m.eventId().equals(d.messageEventId())) {
          MessageRecorded detailed = d.appliedTo(m);
          if (detailed.msgId() != null) responseAt.putIfAbsent(detailed.msgId(), i);
          if (gatewayBookkeeping(detailed)) {
            conversation.remove(i);
          } else {
            conversation.set(i, detailed);
          }
          return;
        }
      }
    }

    /**
     * An inference-gateway record with no text to learn from: a failed or aborted call, an answer
     * stored cut at max-text-length (partial, as an aborted one), or the empty assistant message of
     * an answer that is only tool calls (its tool calls follow it).
     */
    public static boolean gatewayBookkeeping(MessageRecorded m) {
      var call = m.inference();
      return call != null && m.role() == Role.assistant
          && (call.error() != null || Boolean.TRUE.equals(call.aborted()) || m.content().isEmpty()
              || m.truncated() != null);
    }

    public Trajectory build() {
      return new Trajectory(sessionId, state, List.copyOf(conversation), Map.copyOf(responseAt));
    }
  }

  /**
   * The content of the first user message that says something: the task prompt. A blank one (an
   * empty or whitespace-only turn) asks nothing, so a task never has an empty prompt.
   */
  public Optional<String> prompt() {
    return state.messages().stream().filter(m -> m.role() == Role.user && hasText(m))
        .map(MessageRecorded::content).findFirst();
  }

  /**
   * The system prompt the session's agent ran under (its first system message that says something),
   * which an RL task's rollouts must run under too: Trinity's workflows build their chat from the
   * task's prompt and a config-wide system prompt only.
   */
  public Optional<String> systemPrompt() {
    return state.messages().stream().filter(m -> m.role() == Role.system && hasText(m))
        .map(MessageRecorded::content).findFirst();
  }

  /**
   * Whether the conversation ends on a model's tool call whose result never came back: the inference gateway
   * stores the call with the answer that made it, and AgentScope's structured output ends so (the
   * {@code generate_response} arguments are the answer, and no result is sent).
   */
  public boolean endsOnACallWithoutResult() {
    return !conversation.isEmpty() && conversation.get(conversation.size() - 1) instanceof ToolCallRecorded c
        && c.pending();
  }

  /**
   * The content of the last assistant message that says something: the final answer. A blank one
   * (an agent that answered nothing) is no answer: trained on, it would teach the model to say
   * nothing, and as an RL reference or a DPO side it compares against nothing.
   */
  public Optional<String> finalAnswer() {
    List<MessageRecorded> ms = state.messages();
    for (int i = ms.size() - 1; i >= 0; i--) {
      MessageRecorded m = ms.get(i);
      if (m.role() == Role.assistant && !Builder.gatewayBookkeeping(m) && hasText(m)) {
        return Optional.of(m.content());
      }
    }
    return Optional.empty();
  }

  /**
   * The RL task's {@code reference}: the last assistant answer with text that its user did not rate
   * down by {@code msgId} (per-turn feedback summing below zero, as {@link #learnableUpTo} reads it).
   * The rendered workflow scores every rollout against this text alone, so the answer the user
   * rejected (a thumbs down on the final answer of a session whose reward still passed) became the
   * ground truth to reproduce; an earlier answer the user did not reject is the outcome to aim for.
   * Empty when every answer was rated down, or there was none.
   */
  public Optional<String> referenceAnswer() {
    java.util.Set<String> ratedDown = new java.util.HashSet<>();
    Scoring.turnRewards(state, RewardWeights.defaults()).forEach((id, r) -> {
      if (r < 0) ratedDown.add(id);
    });
    List<MessageRecorded> ms = state.messages();
    for (int i = ms.size() - 1; i >= 0; i--) {
      MessageRecorded m = ms.get(i);
      if (m.role() == Role.assistant && !Builder.gatewayBookkeeping(m) && hasText(m)
          && (m.msgId() == null || !ratedDown.contains(m.msgId()))) {
        return Optional.of(m.content());
      }
    }
    return Optional.empty();
  }

  private static boolean hasText(MessageRecorded m) {
    return m.content() != null && !m.content().isBlank();
  }

  /**
   * How much of the conversation is fit to be learned as the agent's own words: all of it, or the
   * part before the first response that per-turn feedback ({@code msgId}) rated down, i.e. whose
   * feedback sums below zero under design §3.1.1's weights (a thumbs down, a rating of 1 or 2, a
   * repeated question, a hand-off). An SFT line trains every assistant turn it holds, so a line
   * holding that response taught the model the answer its user rejected, whatever the session's
   * reward. The default weights, not the node's: the export runs without the data-collector's config,
   * and only the sign matters.
   */
  public int learnableUpTo() {
    int upTo = conversation.size();
    for (Map.Entry<String, Double> turn : Scoring.turnRewards(state, RewardWeights.defaults()).entrySet()) {
      Integer at = responseAt.get(turn.getKey());
      if (turn.getValue() < 0 && at != null) upTo = Math.min(upTo, at);
    }
    return upTo;
  }

  public double reward() {
    return state.reward() == null ? 0.0 : state.reward();
  }
}
