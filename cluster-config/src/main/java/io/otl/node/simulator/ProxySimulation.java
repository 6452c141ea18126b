package io.otl.node.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * The Trinity {@code serve} proxy side of the simulator, with one rollout model ({@code model_0}).
 *
 * <ul>
 *   <li>Every chat completion is one experience ({@code rollout/total_experience_count}) whose
 *       {@code id} is the msg_id a later feedback names.
 *   <li>A feedback naming a known, not yet rewarded msg_id makes that experience ready ({@code
 *       rollout/ready_experience_count}).
 *   <li>{@code POST /commit} with at least {@code commitBatchSize} experiences made ready since the
 *       last training step "trains": {@code model_version} and {@code explore_step_num} go up by one.
 * </ul>
 *
 * All state is guarded by this object's lock: requests are few and tiny.
 */
final class ProxySimulation {

  private final ObjectMapper mapper;
  private final int commitBatchSize;
  private final Map<String, Boolean> rewarded = new LinkedHashMap<>();
  private final List<JsonNode> feedback = new ArrayList<>();
  private long requestCount;
  private long readyCount;
  private long readySinceStep;
  private int modelVersion;
  private long exploreStep;
  private long commits;
  private long allocatedSessions;

  private static final String REPLY_PREFIX = "[simulated reply from ";

  /** {@code reply} with its speaker (the part after "simulated reply from") replaced by {@code speaker}. */
  static String replyFrom(String speaker, String reply) {
    int end = reply.indexOf("] ");
    return reply.startsWith(REPLY_PREFIX) && end > 0 ? REPLY_PREFIX + speaker + reply.substring(end) : reply;
  }

  ProxySimulation(ObjectMapper mapper, int commitBatchSize) {
    this.mapper = mapper;
    this.commitBatchSize = commitBatchSize;
  }

  /** A new session id ({@code GET|POST /allocate}); counted in the admin view {@code /simulator/feedback}. */
  synchronized String allocateSession() {
    allocatedSessions++;
    return UUID.randomUUID().toString().replace("-", "");
  }

    /** An OpenAI chat completion, or empty when the request has no usable {@code messages}. */
  synchronized Optional<ObjectNode> chatCompletion(JsonNode request) {
    JsonNode messages = request.path("messages");
    if (!messages.isArray() || messages.isEmpty()) {
      return Optional.empty();
    }
    String id = "chatcmpl-" + UUID.randomUUID().toString().replace("-", "");
    requestCount++;
    rewarded.put(id, false);
    String lastUser = "";
    for (JsonNode m : messages) {
      if ("user".equals(m.path("role").asText())) {
        lastUser = text(m.path("content"));
      }
    }
    String content =
        REPLY_PREFIX + "model version " + modelVersion + "] "
            // Cut where no surrogate pair is split: half an emoji was answered as a lone surrogate
            // ("\ud83d", '?' when streamed) and recorded so by the gateway (trial t102).
            + (lastUser.length() > 200 ? io.otl.core.session.TextPrefixes.prefix(lastUser, 200) + "…" : lastUser);
    ObjectNode resp = mapper.createObjectNode();
    resp.put("id", id);
    resp.put("object", "chat.completion");
    resp.put("created", System.currentTimeMillis() / 1000);
    resp.put("model", request.path("model").asText("trinity-simulator"));
    ObjectNode choice = resp.putArray("choices").addObject();
    choice.put("index", 0);
    choice.putObject("message").put("role", "assistant").put("content", content);
    choice.putNull("logprobs");
    choice.put("finish_reason", "stop");
    int promptTokens = Math.max(1, messages.toString().length() / 4);
    int completionTokens = Math.max(1, content.length() / 4);
    resp.putObject("usage")
        .put("prompt_tokens", promptTokens)
        .put("completion_tokens", completionTokens)
        .put("total_tokens", promptTokens + completionTokens);
    return Optional.of(resp);
  }

  /**
   * A message's text as a model reads it: the string, or OpenAI's content parts (an array of
   * {@code {"type":"text","text":…}}, as many clients send even for plain text) joined by newlines;
   * other parts (images, audio) carry no text.
   */
  static String text(JsonNode content) {
    if (!content.isArray()) return content.asText("");
    StringBuilder text = new StringBuilder();
    for (JsonNode part : content) {
      if (!"text".equals(part.path("type").asText()) || !part.path("text").isTextual()) continue;
      if (text.length() > 0) text.append('\n');
      text.append(part.path("text").asText());
    }
    return text.toString();
  }

  /** Records a feedback; returns the proxy's error text when it is malformed. */
  synchronized Optional<String> feedback(JsonNode body) {
    JsonNode msgIds = body.get("msg_ids");
    JsonNode reward = body.get("reward");
    if (msgIds == null || msgIds.isNull() || reward == null || reward.isNull()) {
      return Optional.of("msg_ids and reward are required");
    }
    if (!msgIds.isArray() || !reward.isNumber()) {
      return Optional.of("msg_ids must be a list and reward must be a number");
    }
    feedback.add(body.deepCopy());
    for (JsonNode id : msgIds) {
      if (Boolean.FALSE.equals(rewarded.get(id.asText()))) {
        rewarded.put(id.asText(), true);
        readyCount++;
        readySinceStep++;
      }
    }
    return Optional.empty();
  }

  synchronized void commit() {
    commits++;
    if (readySinceStep >= commitBatchSize) {
      readySinceStep = 0;
      exploreStep++;
      modelVersion++;
    }
  }

  synchronized ObjectNode metrics() {
    ObjectNode m = mapper.createObjectNode();
    m.put("rollout/model_0/total_request_count", requestCount);
    m.put("rollout/model_0/model_version", modelVersion);
    m.put("rollout/total_experience_count", (long) rewarded.size());
    m.put("rollout/ready_experience_count", readyCount);
    m.put("explore_step_num", exploreStep);
    return m;
  }

  /** Admin: every feedback body received, as sent. */
  synchronized ObjectNode receivedFeedback() {
    ObjectNode n = mapper.createObjectNode();
    n.put("commits", commits);
    n.put("allocated_sessions", allocatedSessions);
    ArrayNode all = n.putArray("feedback");
    feedback.forEach(all::add);
    return n;
  }
}
