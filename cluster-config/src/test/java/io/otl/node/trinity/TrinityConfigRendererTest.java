package io.otl.node.trinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.typesafe.config.ConfigFactory;
import io.otl.core.training.TrainingJobSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TrinityConfigRendererTest {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private final TrinityConfigRenderer renderer = new TrinityConfigRenderer(1, 2);

  @Test
  void sftConfigCarriesModelHyperparamsDatasetFormatAndCheckpointRoot() throws Exception {
    Map<String, Object> hp = new LinkedHashMap<>();
    hp.put("learning-rate", 2e-5);
    hp.put("batch-size", 16);
    hp.put("epochs", "3");
    hp.put("warmup_ratio", 0.1);
    String text = renderer.render(spec("sft", hp));
    JsonNode yaml = YAML.readTree(text);

    assertEquals("support-agent", yaml.path("project").asText());
    assertEquals("job-1", yaml.path("name").asText());
    assertEquals("train", yaml.path("mode").asText());
    assertEquals(Path.of("/data/checkpoints").toAbsolutePath().toString(), yaml.path("checkpoint_root_dir").asText());
    assertEquals("sft", yaml.path("algorithm").path("algorithm_type").asText());
    assertEquals(2e-5, yaml.path("algorithm").path("optimizer").path("lr").asDouble());
    assertEquals(0.1, yaml.path("algorithm").path("optimizer").path("lr_warmup_steps_ratio").asDouble());
    assertEquals("qwen2.5-7b-instruct", yaml.path("model").path("model_path").asText());
    assertEquals(2, yaml.path("cluster").path("gpu_per_node").asInt());
    assertEquals(3, yaml.path("buffer").path("total_epochs").asInt());
    assertEquals(16, yaml.path("buffer").path("train_batch_size").asInt());
    JsonNode dataset = yaml.path("buffer").path("trainer_input").path("experience_buffer");
    assertEquals("file", dataset.path("storage_type").asText());
    // Trinity calls datasets.load_dataset(path, split=split): a folder holding only this job's rows.
    assertEquals(Path.of("/data/exports/job-1").toAbsolutePath().toString(), dataset.path("path").asText());
    assertEquals("train", dataset.path("split").asText());
    assertEquals("messages", dataset.path("format").path("prompt_type").asText());
    assertEquals("messages", dataset.path("format").path("messages_key").asText());
    assertEquals("tools", dataset.path("format").path("tools_key").asText(), "tools go to apply_chat_template");
    assertTrue(dataset.path("format").path("enable_concatenated_multi_turn").asBoolean(),
        "every assistant turn of a line is trained, not only its last");
    assertEquals("last", yaml.path("trainer").path("save_hf_checkpoint").asText());
    // Plain decimals: PyYAML (OmegaConf) reads "1e-5"-style exponents as strings.
    assertTrue(text.contains("lr: 0.00002"), text);
    assertFalse(text.contains("E-"), text);
  }

  @Test
  void servedAsLoraAdaptersJobsTrainOneAdapterAndSyncThroughCheckpoints() throws Exception {
    TrinityConfigRenderer lora = new TrinityConfigRenderer(1, 2, true);
    JsonNode sft = YAML.readTree(lora.render(spec("sft", Map.of("lora-rank", 8))));
    JsonNode adapter = sft.path("model").path("lora_configs").path(0);
    assertEquals("lora", adapter.path("name").asText());
    assertEquals(8, adapter.path("lora_rank").asInt());
    assertEquals(32, adapter.path("lora_alpha").asInt());
    JsonNode grpo = YAML.readTree(lora.render(spec("grpo", Map.of("reward-fn-type", "math_reward"))));
    assertEquals(16, grpo.path("model").path("lora_configs").path(0).path("lora_rank").asInt());
    assertEquals("checkpoint", grpo.path("synchronizer").path("sync_method").asText());
    assertTrue(YAML.readTree(renderer.render(spec("sft", Map.of()))).path("model").path("lora_configs").isMissingNode(),
        "full fine-tuning without the flag");
  }

  @Test
  void aContinualLoraJobKeepsTrainingTheStableAdapterOnTheBaseModel() throws Exception {
    // Trinity-RFT writes a LoRA run's adapter to actor/lora_adapter; the node loads it into vLLM and
    // the next job continues it. As model_path it would be taken for full weights (it holds none).
    String adapter = "file:///ckpt/support-agent/job-1/global_step_30/actor/lora_adapter";
    TrainingJobSpec continual = new TrainingJobSpec("job-2", "support-agent", "sft", "qwen2.5-7b-instruct", Map.of(),
        "/data/exports/job-2/train.jsonl", "/data/checkpoints", Map.of(), adapter);
    TrinityConfigRenderer lora = new TrinityConfigRenderer(1, 2, true);
    for (JsonNode config : List.of(YAML.readTree(lora.render(continual)), YAML.readTree(lora.renderBench(continual)))) {
      JsonNode model = config.path("model");
      assertEquals("qwen2.5-7b-instruct", model.path("model_path").asText(), config.toString());
      assertEquals("/ckpt/support-agent/job-1/global_step_30/actor/lora_adapter",
          model.path("lora_configs").path(0).path("path").asText(), config.toString());
    }
    JsonNode first = YAML.readTree(lora.render(spec("sft", Map.of())));
    assertTrue(first.path("model").path("lora_configs").path(0).path("path").isMissingNode(), "a first job starts a new adapter");

    // Full weights: the continued checkpoint is the model, in training and bench alike.
    String weights = "file:///ckpt/support-agent/job-1/global_step_30/actor/huggingface";
    TrainingJobSpec full = new TrainingJobSpec("job-2", "support-agent", "sft", "qwen2.5-7b-instruct", Map.of(),
        "/data/exports/job-2/train.jsonl", "/data/checkpoints", Map.of(), weights);
    for (JsonNode config : List.of(YAML.readTree(renderer.render(full)), YAML.readTree(renderer.renderBench(full)))) {
      assertEquals("/ckpt/support-agent/job-1/global_step_30/actor/huggingface",
          config.path("model").path("model_path").asText(), config.toString());
      assertTrue(config.path("model").path("lora_configs").isMissingNode());
    }
  }

  /** DPO reads the conversation before the answers: Trinity's messages reader, with our keys. */
  @Test
  void dpoReadsTheConversationBeforeTheAnswers() throws Exception {
    JsonNode format =
        YAML.readTree(renderer.render(spec("dpo", Map.of())))
            .path("buffer").path("trainer_input").path("experience_buffer").path("format");
    assertEquals("messages", format.path("prompt_type").asText());
    assertEquals("messages", format.path("messages_key").asText());
    assertEquals("chosen_messages", format.path("chosen_key").asText());
    assertEquals("rejected_messages", format.path("rejected_key").asText());
  }

  /** A retried submission of an earlier build's DPO file, which has only the three texts, reads them. */
  @Test
  void anEarlierBuildsDpoFileIsReadAsPlaintext(@TempDir Path dir) throws Exception {
    Path file = Files.createDirectories(dir.resolve("job-9")).resolve("train.jsonl");
    Files.writeString(file, "{\"prompt\":\"Hi\",\"chosen\":\"Hello!\",\"rejected\":\"No.\"}\n");
    TrainingJobSpec old = new TrainingJobSpec("job-9", "support-agent", "dpo", "qwen2.5-7b-instruct", Map.of(),
        file.toString(), "/data/checkpoints", Map.of(), null);
    JsonNode format = YAML.readTree(renderer.render(old))
        .path("buffer").path("trainer_input").path("experience_buffer").path("format");
    assertEquals("plaintext", format.path("prompt_type").asText());
    assertEquals("prompt", format.path("prompt_key").asText());
    assertEquals("chosen", format.path("chosen_key").asText());
    assertEquals("rejected", format.path("rejected_key").asText());
  }

  @Test
  void grpoRunsExplorerAndTrainerOnTheTaskset() throws Exception {
    JsonNode yaml = YAML.readTree(renderer.render(spec("grpo", Map.of("batchSize", 8, "reward-fn-type", "my_judge"))));
    assertEquals("both", yaml.path("mode").asText());
    assertEquals("grpo", yaml.path("algorithm").path("algorithm_type").asText());
    assertEquals(8, yaml.path("algorithm").path("repeat_times").asInt());
    assertEquals(8, yaml.path("buffer").path("batch_size").asInt());
    JsonNode taskset = yaml.path("buffer").path("explorer_input").path("taskset");
    assertEquals(Path.of("/data/exports/job-1").toAbsolutePath().toString(), taskset.path("path").asText());
    assertEquals("train", taskset.path("split").asText());
    assertEquals("prompt", taskset.path("format").path("prompt_key").asText());
    assertEquals("reference", taskset.path("format").path("response_key").asText(),
        "the recorded answer is the truth the reward function scores against");
    assertEquals("my_judge", taskset.path("default_reward_fn_type").asText());
    assertEquals("queue", yaml.path("buffer").path("trainer_input").path("experience_buffer").path("storage_type").asText());
  }

  @Test
  void rlWithoutANamedRewardFunctionIsRefusedRatherThanLeftToTrinitysDefault() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> renderer.render(spec("ppo", Map.of())));
    assertTrue(e.getMessage().contains("hyperparams.reward-fn-type"), e.getMessage());
    assertEquals(List.of(), io.otl.core.coordinator.RewardSource.problems("ppo", Map.of("reward_fn_type", "j"),
        io.otl.core.coordinator.TrainingPolicy.Backend.RAY_JOBS));
    assertEquals(List.of(), io.otl.core.coordinator.RewardSource.problems("ppo", Map.of(),
        io.otl.core.coordinator.TrainingPolicy.Backend.TRINITY_PROXY), "online RL gets our rewards directly");
    assertEquals(List.of(), io.otl.core.coordinator.RewardSource.problems("sft", Map.of(),
        io.otl.core.coordinator.TrainingPolicy.Backend.RAY_JOBS));
  }

  @Test
  void distillationIsOnPolicyWithTheTeacherAsAuxiliaryModel() throws Exception {
    Map<String, Object> hp = new LinkedHashMap<>();
    hp.put("teacher_model", "Qwen/Qwen2.5-72B-Instruct");
    hp.put("kl-coef", 0.5);
    JsonNode yaml = YAML.readTree(renderer.render(spec("distillation", hp)));
    assertEquals("on_policy_distill", yaml.path("algorithm").path("algorithm_type").asText());
    assertEquals(0.5, yaml.path("algorithm").path("advantage_fn_args").path("kl_coef").asDouble());
    assertEquals("both", yaml.path("mode").asText(), "the student answers the prompts itself");
    JsonNode teacher = yaml.path("explorer").path("auxiliary_models").get(0);
    assertEquals("Qwen/Qwen2.5-72B-Instruct", teacher.path("model_path").asText());
    assertEquals("qwen2.5-7b-instruct", yaml.path("model").path("model_path").asText(), "the student");
    JsonNode taskset = yaml.path("buffer").path("explorer_input").path("taskset");
    assertEquals("on_policy_distill_workflow", taskset.path("default_workflow_type").asText());
    assertEquals("prompt", taskset.path("format").path("prompt_key").asText());
    assertTrue(taskset.path("default_reward_fn_type").isMissingNode(), "the teacher is the signal");
    assertEquals("queue", yaml.path("buffer").path("trainer_input").path("experience_buffer").path("storage_type").asText());
  }

  @Test
  void distillationWithoutATeacherIsRefusedNamingTheKey() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> renderer.render(spec("distillation", Map.of())));
    assertTrue(e.getMessage().contains("hyperparams.teacher-model"), e.getMessage());
    assertEquals(1, io.otl.core.coordinator.Distillation.problems("distillation", Map.of(),
        io.otl.core.coordinator.TrainingPolicy.Backend.RAY_JOBS).size());
    assertEquals(List.of(), io.otl.core.coordinator.Distillation.problems("distillation",
        Map.of("teacher-model", "big"), io.otl.core.coordinator.TrainingPolicy.Backend.RAY_JOBS));
    assertEquals(1, io.otl.core.coordinator.Distillation.problems("distillation",
        Map.of("teacher-model", " "), io.otl.core.coordinator.TrainingPolicy.Backend.RAY_JOBS).size(),
        "blank counts as none");
  }

  @Test
  void configIsWrittenBesideTheJobsDataFolderAndCheckpointsGoUnderAgentAndJob() {
    TrainingJobSpec spec = spec("sft", Map.of());
    // Outside the folder: anything in it would be read as rows by load_dataset(folder).
    assertEquals(Path.of("/data/exports/job-1.trinity.yaml").toAbsolutePath(), TrinityConfigRenderer.configPath(spec));
    assertEquals(Path.of("/data/exports/job-1/test.jsonl").toAbsolutePath(), TrinityConfigRenderer.evalPath(spec));
    assertEquals(
        Path.of("/data/checkpoints/support-agent/job-1").toAbsolutePath(), TrinityConfigRenderer.checkpointJobDir(spec));
  }

  @Test
  void relativeDirectoriesAreRenderedWithoutDotSegments() throws Exception {
    // The defaults are ./datasets and ./checkpoints: the YAML, the Ray entrypoint and the candidate's
    // artifact URI read /work/./checkpoints/... before.
    TrainingJobSpec spec = new TrainingJobSpec("job-1", "support-agent", "sft", "qwen2.5-7b-instruct", Map.of(),
        "./exports/../exports/job-1/train.jsonl", "./checkpoints", Map.of());
    Path cwd = Path.of("").toAbsolutePath();
    assertEquals(cwd.resolve("checkpoints/support-agent/job-1"), TrinityConfigRenderer.checkpointJobDir(spec));
    JsonNode yaml = YAML.readTree(renderer.render(spec));
    assertEquals(cwd.resolve("checkpoints").toString(), yaml.path("checkpoint_root_dir").asText());
    assertEquals(cwd.resolve("exports/job-1").toString(),
        yaml.at("/buffer/trainer_input/experience_buffer/path").asText());
    JsonNode bench = YAML.readTree(renderer.renderBench(spec));
    assertEquals(cwd.resolve("checkpoints").toString(), bench.path("checkpoint_root_dir").asText());
    assertEquals(cwd.resolve("exports/job-1").toString(), bench.at("/buffer/explorer_input/eval_tasksets/0/path").asText());
  }

  @Test
  void aJobRecordedByAnEarlierBuildKeepsItsSingleFileAndItsFileNames() throws Exception {
    TrainingJobSpec old = new TrainingJobSpec("job-1", "support-agent", "sft", "qwen2.5-7b-instruct", Map.of(),
        "/data/exports/job-1.jsonl", "/data/checkpoints", Map.of());
    JsonNode dataset = YAML.readTree(renderer.render(old)).at("/buffer/trainer_input/experience_buffer");
    assertEquals(Path.of("/data/exports/job-1.jsonl").toAbsolutePath().toString(), dataset.path("path").asText());
    assertEquals(Path.of("/data/exports/job-1.trinity.yaml").toAbsolutePath(), TrinityConfigRenderer.configPath(old));
    assertEquals(Path.of("/data/exports/job-1.eval.jsonl").toAbsolutePath(), TrinityConfigRenderer.evalPath(old));
    JsonNode eval = YAML.readTree(renderer.renderBench(old)).at("/buffer/explorer_input/eval_tasksets/0");
    assertEquals(Path.of("/data/exports/job-1.eval.jsonl").toAbsolutePath().toString(), eval.path("path").asText());
    assertEquals("train", eval.path("split").asText());
  }

  @Test
  void nonNumericHyperparameterIsRejectedByName() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> renderer.render(spec("sft", Map.of("epochs", "many"))));
    assertTrue(e.getMessage().contains("epochs"), e.getMessage());
  }

  @Test
  void specRejectsPathEscapingIdsAndUnknownAlgorithms() {
    assertThrows(IllegalArgumentException.class, () -> spec("rlhf", Map.of()));
    assertThrows(
        IllegalArgumentException.class,
        () -> new TrainingJobSpec("..", "a", "sft", "m", Map.of(), "/d", "/c", Map.of()));
    assertThrows(
        IllegalArgumentException.class,
        () -> new TrainingJobSpec("j/../../etc", "a", "sft", "m", Map.of(), "/d", "/c", Map.of()));
  }

  @Test
  void settingsReadTheAgentScopeKeysAndRedactTheToken() {
    TrinitySettings s =
        TrinitySettings.fromConfig(
            ConfigFactory.parseString(
                "agentscope.training.training-runner { backend = trinity-proxy, trinity-endpoint = \"http://trinity:8010/\","
                    + " trinity { request-timeout = 5s, auth-token = hunter2 } }"));
    assertEquals("trinity-proxy", s.backend());
    assertEquals("http://trinity:8010", s.endpoint().baseUri().toString());
    assertEquals(Duration.ofSeconds(5), s.endpoint().requestTimeout());
    assertFalse(s.toString().contains("hunter2"));
    assertThrows(
        IllegalArgumentException.class,
        () -> TrinitySettings.fromConfig(ConfigFactory.parseString("agentscope.training.training-runner.backend = slurm")));
  }

  /**
   * Trinity reads the config with OmegaConf, i.e. PyYAML's YAML 1.1 resolvers (plus exponent floats
   * without a dot): an agent id such as {@code 12:30} rendered plain as {@code project} was the int
   * 750 there, so Trinity wrote the job's checkpoints under {@code <root>/750/<jobId>}, not where the
   * node looks. SnakeYAML resolves YAML 1.1 scalars as PyYAML does (12:30, 0x10, 1_000, .inf,
   * timestamps); 1e3 is a float only to OmegaConf's extra resolver, so its quotes are checked as text.
   */
  @Test
  void agentIdsThatYaml11ReadsAsNumbersOrDatesStayStrings() throws Exception {
    for (String agent : List.of("12:30", "0x10", "1_000", ".inf", "2026-01-01", "1e3", "017", "-5")) {
      TrainingJobSpec spec = new TrainingJobSpec("job-1", agent, "sft", "qwen2.5-7b-instruct", Map.of(),
          "/data/exports/job-1/train.jsonl", "/data/checkpoints", Map.of());
      for (String text : List.of(renderer.render(spec), renderer.renderBench(spec))) {
        Map<String, Object> yaml = new org.yaml.snakeyaml.Yaml().load(text);
        assertEquals(agent, yaml.get("project"), text);
        assertTrue(text.contains("\nproject: \"" + agent + "\"\n"), text);
      }
    }
    // Ordinary values keep their plain form.
    String text = renderer.render(spec("sft", Map.of()));
    assertTrue(text.contains("\nproject: support-agent\n") && text.contains("\nmode: train\n"), text);
  }

  private static TrainingJobSpec spec(String algorithm, Map<String, Object> hp) {
    return new TrainingJobSpec(
        "job-1",
        "support-agent",
        algorithm,
        "qwen2.5-7b-instruct",
        hp,
        "/data/exports/job-1/train.jsonl",
        "/data/checkpoints",
        Map.of());
  }
}
