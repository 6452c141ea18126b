package io.otl.node.trinity;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.training.OnlineTrainingBackend;
import io.otl.core.training.ProxyMetrics;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.pekko.actor.typed.ActorSystem;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link OnlineTrainingBackend} over the HTTP API of a Trinity-RFT {@code serve} proxy (design §5,
 * {@code trinity-proxy}; default port 8010): {@code POST /feedback}, {@code POST /commit}, {@code GET
 * /metrics}, {@code GET /health}. The proxy answers a malformed feedback with 400 {@code
 * {"error": …}}, which surfaces as a REJECTED failure.
 */
public final class TrinityProxyBackend implements OnlineTrainingBackend {

  public static final String TYPE = "trinity-proxy";

  private static final Logger log = LoggerFactory.getLogger(TrinityProxyBackend.class);
  private static final Pattern MODEL_VERSION = Pattern.compile("rollout/model_(\\d+)/model_version");

  private final JsonHttpClient http;

  public TrinityProxyBackend(ActorSystem<?> system, TrinityEndpoint endpoint) {
    this.http = new JsonHttpClient(system, endpoint, new ObjectMapper(), "Trinity proxy");
  }

  @Override
  public String type() {
    return TYPE;
  }

  @Override
  public CompletionStage<Void> forwardReward(List<String> msgIds, double reward, String taskId, int runId) {
    Objects.requireNonNull(msgIds, "msgIds");
    if (msgIds.isEmpty()) {
      throw new IllegalArgumentException("msgIds must not be empty: a reward needs responses to attach to");
    }
    if (!Double.isFinite(reward)) {
      throw new IllegalArgumentException("reward must be a finite number, was " + reward);
    }
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("msg_ids", List.copyOf(msgIds));
    body.put("reward", reward);
    body.put("task_id", taskId);
    body.put("run_id", runId); // an int: the proxy groups runs of a task by this integer
    return http.expectJson(http.post("/feedback", body), "POST", "/feedback").thenApply(b -> null);
  }

  @Override
  public CompletionStage<Void> commit() {
    return http.expectJson(http.post("/commit", null), "POST", "/commit").thenApply(b -> null);
  }

  @Override
  public CompletionStage<ProxyMetrics> metrics() {
    return http.expectJson(http.get("/metrics"), "GET", "/metrics").thenApply(TrinityProxyBackend::toMetrics);
  }

  @Override
  public CompletionStage<Boolean> health() {
    return http.get("/health")
        .handle(
            (reply, error) -> {
              if (error != null) {
                log.debug("Trinity proxy health check failed: {}", JsonHttpClient.unwrap(error).getMessage());
                return false;
              }
              return reply.isSuccess();
            });
  }

  static ProxyMetrics toMetrics(JsonNode json) {
    Map<Integer, Integer> versions = new LinkedHashMap<>();
    json.fields()
        .forEachRemaining(
            e -> {
              Matcher m = MODEL_VERSION.matcher(e.getKey());
              if (m.matches() && e.getValue().isNumber()) {
                versions.put(Integer.parseInt(m.group(1)), e.getValue().intValue());
              }
            });
    return new ProxyMetrics(
        versions,
        json.path("rollout/total_experience_count").asLong(0),
        json.path("rollout/ready_experience_count").asLong(0),
        json.path("explore_step_num").asLong(0));
  }
}
