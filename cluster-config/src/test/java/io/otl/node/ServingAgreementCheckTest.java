package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.node.config.ModelSection;
import io.otl.node.serving.ServingSettings;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The join-time rule of one way of serving per cluster (trial t133); the multi-JVM case is ServingAgreementClusterTest. */
class ServingAgreementCheckTest {
  private static final Optional<ModelSection> V0 =
      Optional.of(new ModelSection("openai-compatible", "http://v0:8000/v1", "sk-secret", "base-7b", 60, 3));

  private static ServingSettings serving(String backend, boolean simulator, String vllmUrl) {
    return new ServingSettings(backend, "ray-jobs", "Qwen2.5-1.5B", simulator, vllmUrl, "vllm-secret",
        Duration.ofSeconds(30), "", Duration.ofMillis(100), Duration.ofSeconds(1), 3);
  }

  @Test
  void theSameSettingsJoinAndEachNodesOwnSimulatorIsTheSame() {
    assertEquals(Optional.empty(), ServingAgreementCheck.mismatch(
        ServingAgreementCheck.config(serving("vllm-lora", false, "http://vllm:8000"), V0),
        ServingAgreementCheck.config(serving("vllm-lora", false, "http://vllm:8000"), V0)));
    // auto with a simulator in each node: v0 and vLLM are each node's own simulator (other ports).
    assertEquals(Optional.empty(), ServingAgreementCheck.mismatch(
        ServingAgreementCheck.config(serving("auto", true, ""), Optional.empty()),
        ServingAgreementCheck.config(serving("auto", true, ""), Optional.empty())));
  }

  @Test
  void theEmbeddedExamplesSettingsInAVllmLoraClusterAreRefusedNamingEachSettingWithoutSecrets() {
    Config cluster = ServingAgreementCheck.config(serving("vllm-lora", false, "http://vllm:8000"), V0);
    Config self = ServingAgreementCheck.config(serving("auto", false, ""), Optional.empty());
    String why = ServingAgreementCheck.mismatch(cluster, self).orElseThrow();
    assertTrue(why.contains("serving backend (agentscope.training.serving.backend, OTL_SERVING_BACKEND; auto "
        + "resolved): this node static, the cluster vllm-lora"), why);
    assertTrue(why.contains("this node none, the cluster base-7b"), why);
    assertTrue(why.contains("this node none, the cluster http://v0:8000/v1"), why);
    assertTrue(why.contains("this node \"\", the cluster http://vllm:8000"), why);
    assertTrue(why.contains("start it with the cluster's serving settings"), why);
    assertFalse(cluster.toString().contains("secret") || why.contains("secret"), why);
  }

  @Test
  void anotherVllmServerOrBaseModelIsRefused() {
    Config cluster = ServingAgreementCheck.config(serving("vllm-lora", false, "http://vllm:8000"), Optional.empty());
    String why = ServingAgreementCheck.mismatch(cluster,
        ServingAgreementCheck.config(serving("vllm-lora", false, "http://vllm-2:8000"), Optional.empty())).orElseThrow();
    assertTrue(why.contains("vLLM URL") && why.contains("this node http://vllm-2:8000, the cluster http://vllm:8000"),
        why);
    assertFalse(why.contains("serving backend"), why);
  }

  @Test
  void aSideWithoutTheSettingsIsNotJudged() {
    Config self = ServingAgreementCheck.config(serving("static", false, ""), Optional.empty());
    assertEquals(Optional.empty(), ServingAgreementCheck.mismatch(ConfigFactory.empty(), self));
    assertEquals(Optional.empty(), ServingAgreementCheck.mismatch(self, ConfigFactory.empty()));
  }

  @Test
  void theCheckerIsPluggedIntoTheNodesPekkoConfig() {
    Config node = ConfigFactory.parseResources("otl-node.conf")
        .withFallback(ConfigFactory.defaultReference()).resolve();
    assertEquals(ServingAgreementCheck.class.getName(),
        node.getString("pekko.cluster.configuration-compatibility-check.checkers.otl-serving-agreement"));
  }
}
