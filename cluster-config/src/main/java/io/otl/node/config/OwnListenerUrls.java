package io.otl.node.config;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigValue;
import io.otl.http.gateway.ServingUrls;
import java.util.List;

/**
 * v0's server may not be the node itself. Its agents now use the node as their {@code base_url}, so
 * writing the node's own URL into the AgentScope {@code model} section's {@code base_url} (or
 * {@code serving.vllm.url}, v0's server with {@code vllm-lora}) is a natural mistake, and every call of
 * v0 then re-entered the node's gateway. Refused at start-up, one line per key, when the URL plainly is
 * the node's listener ({@link ServingUrls#reachesListener}: {@code http.host} and a fixed {@code http.port});
 * another name of this machine, or a picked port ({@code http.port = 0}), is caught on the first call
 * instead, which the receiving gateway refuses as a loop (docs/gateway.md).
 */
final class OwnListenerUrls {
  private OwnListenerUrls() {}

  private static final String HTTP = TrainingSettingsValidator.ROOT + ".http";
  private static final String REQUIREMENT = "the URL of the model server that serves v0 (the OpenAI-compatible base "
      + "URL of vLLM, OpenAI …), not this node's own HTTP listener (" + HTTP + ".host and .port): the gateway "
      + "would call itself";

  static List<String> errors(Config merged) {
    if (!flag(merged, HTTP + ".enabled") || !flag(merged, TrainingSettingsValidator.ROOT + ".gateway.enabled")) {
      return List.of();
    }
    int port;
    String host;
    try {
      port = merged.getInt(HTTP + ".port");
      host = merged.getString(HTTP + ".host");
    } catch (RuntimeException wrong) {
      return List.of(); // the keys' own rules say so
    }
    SettingsCheck check = new SettingsCheck(merged);
    for (String key : List.of(ModelSection.PATH + ".base-url", TrainingSettingsValidator.ROOT + ".serving.vllm.url")) {
      if (!merged.hasPath(key)) continue;
      ConfigValue v = merged.getValue(key);
      if (v.unwrapped() instanceof String url && ServingUrls.reachesListener(url, host, port)) {
        check.error(key, v, REQUIREMENT);
      }
    }
    return check.errors;
  }

  private static boolean flag(Config merged, String key) {
    try {
      return merged.getBoolean(key);
    } catch (RuntimeException wrong) {
      return false;
    }
  }
}
