package io.otl.node.gateway;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import java.util.Map;

/**
 * A node whose agent is served by a {@link ScriptedUpstream}, and the official OpenAI SDK pointed at its gateway as
 * that agent: what the scripted tool-call tests share. Training never triggers (their sessions are read, not pooled).
 */
final class ScriptedGateway implements AutoCloseable {
  final ScriptedUpstream upstream;
  final GatewayTestNode node;
  final OpenAIClient client;

  private ScriptedGateway(ScriptedUpstream upstream, GatewayTestNode node, OpenAIClient client) {
    this.upstream = upstream;
    this.node = node;
    this.client = client;
  }

  /** @param sdkRetries the SDK's {@code maxRetries}: 0 sees every failure, 2 (its default) resends a 5xx */
  static ScriptedGateway start(String name, String agent, int sdkRetries) throws Exception {
    ScriptedUpstream upstream = new ScriptedUpstream();
    GatewayTestNode node = null;
    try {
      node = GatewayTestNode.start(name, Map.of("agentscope.training.training-runner.trigger.min-samples", 1000));
      node.servingAt(agent, upstream.baseUrl());
      OpenAIClient client = OpenAIOkHttpClient.builder().apiKey("unused").baseUrl(node.uri("/v1").toString())
          .putHeader("X-Agent-Id", agent).maxRetries(sdkRetries).build();
      return new ScriptedGateway(upstream, node, client);
    } catch (Exception | Error e) {
      if (node != null) node.close();
      upstream.close();
      throw e;
    }
  }

  @Override
  public void close() throws Exception {
    try {
      node.close();
    } finally {
      upstream.close();
    }
  }
}
