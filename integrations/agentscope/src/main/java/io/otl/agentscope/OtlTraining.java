package io.otl.agentscope;

import io.agentscope.core.agent.AgentBase;
import java.time.Duration;

/**
 * Zero-code capture for AgentScope Java: one call registers a hook on an agent that records its
 * trajectory (user messages, reasoning steps, tool calls with result and latency, replies, errors)
 * into a training node. See docs/connect-agentscope.md.
 *
 * <pre>{@code
 * OtlTrainingHook training = OtlTraining.attach(agent, TrajectorySink.http("http://node:8080"));
 * agent.call(userMsg).block();
 * training.thumbs(agent, true);
 * }</pre>
 */
public final class OtlTraining {
  private OtlTraining() {}

  /** Attaches with the defaults: agentId = the agent's name (characters an id may not hold as {@code -}), one session per agent instance. */
  public static OtlTrainingHook attach(AgentBase agent, TrajectorySink sink) {
    return builder(sink).attach(agent);
  }

  public static Builder builder(TrajectorySink sink) {
    return new Builder(sink);
  }

  /** Settings of one hook; a hook may be attached to several agents (they share its buffer). */
  public static final class Builder {
    private final TrajectorySink sink;
    private String agentId;
    private String agentVersion;
    private SessionIdProvider sessions = SessionIdProvider.perAgent();
    private int bufferCapacity = 1024;
    private int maxAttempts = 3;
    private Duration retryBackoff = Duration.ofMillis(200);
    private int maxTextLength = 65536;

    private Builder(TrajectorySink sink) {
      if (sink == null) throw new IllegalArgumentException("sink is required");
      this.sink = sink;
    }

    /** The node's agentId (whose pool and models these sessions feed); default: the agent's name, "Weather Agent" as {@code Weather-Agent}. */
    public Builder agentId(String agentId) {
      // A bad id here was only seen as every batch refused by the node, dropped and logged.
      String problem = agentId == null ? null : io.otl.core.Ids.problem("agentId", agentId, io.otl.core.Ids.MAX_AGENT_ID);
      if (problem != null) throw new IllegalArgumentException(problem);
      this.agentId = agentId;
      return this;
    }

    /** Recorded on the session's start event (e.g. the agent's release). */
    public Builder agentVersion(String agentVersion) {
      this.agentVersion = agentVersion;
      return this;
    }

    public Builder sessionIds(SessionIdProvider provider) {
      if (provider == null) throw new IllegalArgumentException("provider is required");
      this.sessions = provider;
      return this;
    }

    /** Batches held while the node is slow or down; past that they are dropped and counted. */
    public Builder bufferCapacity(int batches) {
      this.bufferCapacity = batches;
      return this;
    }

    /** Attempts per batch when the node is unreachable or busy, and the pause growing between them. */
    public Builder retries(int maxAttempts, Duration backoff) {
      if (maxAttempts < 1) throw new IllegalArgumentException("maxAttempts must be at least 1 (1: no retry), was " + maxAttempts);
      if (backoff == null || backoff.isNegative()) {
        throw new IllegalArgumentException("backoff must be a duration of zero or more, was " + backoff);
      }
      this.maxAttempts = maxAttempts;
      this.retryBackoff = backoff;
      return this;
    }

    /**
     * The node's {@code data-collector.max-text-length} (65536 by default): a longer message, reasoning
     * text, tool input or output is sent cut at it, as the gateway and the OpenTelemetry door store such
     * texts, rather than refused by the node and dropped with its event.
     */
    public Builder maxTextLength(int chars) {
      if (chars < 1) throw new IllegalArgumentException("maxTextLength must be at least 1, was " + chars);
      this.maxTextLength = chars;
      return this;
    }

    /** A hook not yet on any agent, for {@code ReActAgent.builder().hook(...)}. */
    public OtlTrainingHook build() {
      return new OtlTrainingHook(new AsyncSender(sink, bufferCapacity, maxAttempts, retryBackoff), agentId,
          agentVersion, sessions, maxTextLength);
    }

    /** Builds the hook and adds it to the agent's hooks (AgentScope keeps them in a concurrent list). */
    public OtlTrainingHook attach(AgentBase agent) {
      OtlTrainingHook hook = build();
      agent.getHooks().add(hook);
      return hook;
    }
  }
}
