package io.otl.wire;

import io.otl.core.coordinator.TrainingCoordinator;
import io.otl.core.coordinator.TrainingPolicy;
import io.otl.core.session.AgentSession;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Response shapes (design §7.1) built from an entity's state, shared by the HTTP edge (live state)
 * and the audit (a state replayed "as of T"), so both answer with exactly the same JSON.
 */
public final class Views {
  private Views() {}

  /** The session shape of GET /v1/sessions/{sessionId}. */
  public static Map<String, Object> session(String sessionId, AgentSession.State s) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("sessionId", sessionId);
    m.put("agentId", s.agentId());
    m.put("status", s.status().name());
    m.put("modelVersion", s.modelVersion());
    m.put("agentVersion", s.agentVersion());
    m.put("metadata", s.metadata());
    m.put("startedAt", s.startedAt());
    m.put("completedAt", s.completedAt());
    m.put("messages", s.messages().stream().map(e -> withInference(map(
        "eventId", e.eventId(), "at", e.at(), "role", e.role().name(), "content", e.content(),
        "msgId", e.msgId(), "latencyMs", e.latencyMs()), e)).toList());
    m.put("toolCalls", s.toolCalls().stream().map(e -> withCut(awaiting(map(
        "eventId", e.eventId(), "at", e.at(), "callId", e.callId(), "toolName", e.toolName(),
        "input", e.input(), "output", e.output(), "success", e.success(), "latencyMs", e.latencyMs()), e),
        e.truncated())).toList());
    m.put("steps", s.steps().stream().map(e -> map(
        "eventId", e.eventId(), "at", e.at(), "index", e.index(), "thought", e.thought(), "action", e.action(),
        "observation", e.observation())).toList());
    m.put("feedback", s.feedback().stream().map(e -> map(
        "eventId", e.eventId(), "at", e.at(), "feedbackId", e.feedbackId(), "kind", e.kind().name(),
        "value", e.value(), "source", e.source(), "msgId", e.msgId())).toList());
    m.put("result", s.result() == null ? null : map(
        "status", s.result().status().name(), "detail", s.result().detail(), "at", s.result().at()));
    m.put("reward", s.reward());
    m.put("qualityScore", s.qualityScore());
    m.put("counts", s.counts());
    return m;
  }

  /**
   * A model's tool call whose result has not come back (the gateway stores it with the answer that made it):
   * {@code "awaitingResult": true}, {@code output} null and no {@code success}, which would say the tool ran.
   */
  private static Map<String, Object> awaiting(Map<String, Object> call, AgentSession.ToolCallRecorded e) {
    if (!e.pending()) return call;
    call.remove("success");
    call.put("awaitingResult", true);
    return call;
  }

  /**
   * What a coordinator knows, from its state: the fields of GET /v1/training/{agentId} that come
   * from the journal ({@code poolSize}, {@code activeJob}, {@code meanQuality}), the configured ones
   * when {@code policy} is given ({@code minSamples}, {@code triggers}, {@code backend}: the policy
   * the caller resolved for this state), and every job in the job shape of GET /v1/jobs/{id}.
   * {@code nextScheduledRun} (with a policy) is the slot the coordinator would have named at {@code
   * at}: "what did it know at 02:00" includes when it meant to train next.
   */
  public static Map<String, Object> coordinator(
      String agentId, TrainingCoordinator.State s, TrainingPolicy policy, Instant at) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("agentId", agentId);
    m.put("poolSize", s.poolSize());
    if (policy != null) {
      m.put("minSamples", policy.minSamples());
      m.put("triggers", policy.triggerNames());
      m.put("nextScheduledRun", TrainingCoordinator.nextScheduledRunAsOf(s, policy, at));
    }
    m.put("activeJob", s.activeJob()
        .map(j -> new TrainingCoordinator.JobSummary(j.jobId(), j.status())).orElse(null));
    m.put("meanQuality", s.meanQuality());
    if (policy != null) m.put("backend", policy.backend().configName());
    m.put("candidatesProduced", s.candidatesProduced());
    m.put("thresholdRearmAt", s.thresholdRearmAt());
    m.put("pendingRewards", s.pendingRewards().size());
    m.put("schedule", s.schedule() == null ? null : map(
        "cron", s.schedule().cron(), "zone", s.schedule().zone(), "from", s.schedule().from(),
        "lastSlot", s.schedule().lastSlot()));
    List<TrainingCoordinator.JobView> jobs = new ArrayList<>(s.jobs().size());
    for (TrainingCoordinator.Job j : s.jobs()) jobs.add(TrainingCoordinator.jobView(agentId, j));
    m.put("jobs", jobs);
    return m;
  }

  /** An insertion-ordered map from alternating keys and values (values may be null). */
  public static Map<String, Object> map(Object... kv) {
    Map<String, Object> m = new LinkedHashMap<>();
    for (int i = 0; i < kv.length; i += 2) m.put((String) kv[i], kv[i + 1]);
    return m;
  }

  /** Messages the inference gateway recorded also say how the model call went. */
  private static Map<String, Object> withInference(Map<String, Object> m, AgentSession.MessageRecorded e) {
    if (e.inference() != null) m.put("inference", e.inference());
    return withCut(m, e.truncated());
  }

  /** Texts the inference gateway stored cut at max-text-length: field → length before the cut. */
  private static Map<String, Object> withCut(Map<String, Object> m, Map<String, Integer> truncated) {
    if (truncated != null) m.put("truncated", truncated);
    return m;
  }
}
