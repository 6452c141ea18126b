package io.otl.node;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.config.ModelSection;
import io.otl.node.serving.ServingSettings;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.pekko.cluster.ConfigValidation;
import org.apache.pekko.cluster.JoinConfigCompatChecker;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One way of serving per cluster: any member may host an agent's ModelVersion, and what it does
 * (which backend deploys a version, which base model is v0) is decided by the settings of the node
 * hosting it. A node configured otherwise (trial t133: the static backend without a base model in a
 * vllm-lora cluster) answered 7 of 30 new agents' first calls with 404 "configure a base model".
 * So a joining node compares these settings with the cluster's, by the same join-time check and
 * self-refusal as {@link JournalIdentityCheck} (see there why the joiner refuses itself).
 *
 * <p>Only resolved values travel, and never a secret: the API keys ({@code serving.vllm.api-key},
 * {@code agentscope.model.api-key}) are left out, since this config is sent to other nodes and a
 * ModelVersion never uses them (the gateway of the node answering a call does). URLs carry no
 * credentials (refused at start-up), so they travel as written.
 */
public final class ServingAgreementCheck extends JoinConfigCompatChecker {
  private static final Logger log = LoggerFactory.getLogger(ServingAgreementCheck.class);
  static final String PATH = "otl.serving-agreement";
  /** serving.backend with auto resolved: how a hosted ModelVersion deploys and serves versions. */
  static final String BACKEND = PATH + ".backend";
  /** v0's served model name ("none" without a base model): what an agent's first version canaries against. */
  static final String BASE_MODEL = PATH + ".base-model";
  /** v0's URL: a hosted ModelVersion journals it and routes the agent's v0 calls there. */
  static final String BASE_URL = PATH + ".base-url";
  /** The vLLM server a vllm-lora ModelVersion loads adapters into ("" for the other backends). */
  static final String VLLM_URL = PATH + ".vllm-url";
  /** The model name the static backend sends upstream for every version. */
  static final String STATIC_SERVED_MODEL = PATH + ".static-served-model";

  /**
   * A setting that is this node's own simulator on every node that has one: its URL differs per
   * node by design (each node's simulator port), so it is compared as "the node's simulator".
   */
  static final String OWN_SIMULATOR = "(this node's simulator)";
  static final String NONE = "none";

  /** Label and what to set, per key, for the refusal. */
  private static final Map<String, String> LABELS = new LinkedHashMap<>();

  static {
    LABELS.put(BACKEND, "serving backend (agentscope.training.serving.backend, OTL_SERVING_BACKEND; auto resolved)");
    LABELS.put(BASE_MODEL, "base model v0 (agentscope.model.model-name, else training-runner.base-model)");
    LABELS.put(BASE_URL, "base model v0 URL (agentscope.model.base-url, else serving.vllm.url)");
    LABELS.put(VLLM_URL, "vLLM URL (agentscope.training.serving.vllm.url, OTL_VLLM_URL)");
    LABELS.put(STATIC_SERVED_MODEL, "static served model (agentscope.training.serving.static.served-model)");
  }

  /** Pekko creates the checker by its no-argument constructor. */
  public ServingAgreementCheck() {}

  /**
   * This node's serving settings as {@link io.otl.node.serving.ServingWiring#serving} resolves them
   * before the simulator starts (its URL is then {@link #OWN_SIMULATOR}), laid over the node's config.
   */
  static Config config(ServingSettings serving, Optional<ModelSection> model) {
    boolean simulator = serving.simulatorEnabled();
    String backend = serving.backendName(simulator);
    boolean vllm = "vllm-lora".equals(backend);
    String vllmUrl = !vllm ? "" : serving.vllmUrl().isBlank() ? OWN_SIMULATOR : serving.vllmUrl();
    String baseModel;
    String baseUrl;
    if (model.isPresent()) {
      baseModel = model.get().modelName();
      baseUrl = model.get().baseUrl();
    } else if (vllm) {
      baseModel = serving.baseModel();
      baseUrl = vllmUrl;
    } else if (simulator) {
      baseModel = serving.baseModel();
      baseUrl = OWN_SIMULATOR;
    } else {
      baseModel = NONE;
      baseUrl = NONE;
    }
    return ConfigFactory.parseMap(Map.of(BACKEND, backend, BASE_MODEL, orEmpty(baseModel), BASE_URL, orEmpty(baseUrl),
        VLLM_URL, vllmUrl, STATIC_SERVED_MODEL, orEmpty(serving.staticServedModel())), "serving agreement");
  }

  private static String orEmpty(String s) {
    return s == null ? "" : s;
  }

  @Override
  public scala.collection.immutable.Seq<String> requiredKeys() {
    return scala.jdk.javaapi.CollectionConverters.asScala(List.copyOf(LABELS.keySet())).toList();
  }

  @Override
  public ConfigValidation check(Config toCheck, Config actualConfig) {
    // On a member toCheck is the joiner's: the warning quotes the refusal the joiner will log.
    return JournalIdentityCheck.judge(mismatch(toCheck, actualConfig), actualConfig,
        () -> "a node with other serving settings asks to join this cluster; it will say: "
            + mismatch(actualConfig, toCheck).orElse(""), log);
  }

  /**
   * Why a node serving as {@code self} must not join a cluster serving as {@code cluster}, or empty
   * when it may: each differing setting with both values. A side without the keys (an earlier
   * build, a test system) is not judged.
   */
  static Optional<String> mismatch(Config cluster, Config self) {
    if (!cluster.hasPath(BACKEND) || !self.hasPath(BACKEND)) return Optional.empty();
    List<String> differing = new ArrayList<>();
    LABELS.forEach((key, label) -> {
      String theirs = cluster.hasPath(key) ? cluster.getString(key) : "(unknown)";
      String ours = self.hasPath(key) ? self.getString(key) : "(unknown)";
      if (!theirs.equals(ours)) {
        differing.add(label + ": this node " + shown(ours) + ", the cluster " + shown(theirs));
      }
    });
    if (differing.isEmpty()) return Optional.empty();
    return Optional.of("this node's serving settings are not the cluster's: " + String.join("; ", differing)
        + ". Any member may host an agent's model versions, so every node serves alike: start it with the "
        + "cluster's serving settings (the same serving and model sections); to change them, stop the whole "
        + "cluster and restart every node with the new ones");
  }

  private static String shown(String value) {
    return value.isEmpty() ? "\"\"" : value;
  }
}
