package io.otl.agentscope;

import io.agentscope.core.agent.Agent;

/**
 * Which training session an agent's call belongs to. The default, {@link #perAgent()}, is the
 * agent's own id: an AgentScope agent instance holds one conversation in its memory, so one agent
 * instance is one session. A server that reuses one agent for many users, or restores a
 * conversation in a new agent, passes its own (e.g. the user's conversation id).
 * Ids must be 1–128 chars of {@code [A-Za-z0-9._:-]} (DESIGN §3.1).
 */
@FunctionalInterface
public interface SessionIdProvider {
  String sessionId(Agent agent);

  /** {@code agent.getAgentId()}: one session per agent instance. */
  static SessionIdProvider perAgent() {
    return Agent::getAgentId;
  }

  /** Always the same session (one agent, one conversation known up front). */
  static SessionIdProvider fixed(String sessionId) {
    return agent -> sessionId;
  }
}
