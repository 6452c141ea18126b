package io.otl.node.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The model-server face of the simulator, in vLLM's shapes: the base model and the LoRA adapters
 * loaded at runtime ({@code GET /v1/models}, {@code POST /v1/load_lora_adapter}, {@code POST
 * /v1/unload_lora_adapter}) with vLLM's refusals: a missing name or path and an already loaded
 * name are 400 {@code InvalidUserInput}, a path that does not exist 404 {@code NotFoundError}, an
 * unknown name to unload 404 {@code NotFoundError}; success is vLLM's plain-text sentence.
 *
 * <p>Each loaded adapter has a quality (share of calls that answer as a failed task, latency added
 * to each call), set through {@code /simulator/models/<name>/quality}, which the chat completions
 * handler applies through {@link #qualityOf}: a test makes a candidate worse and watches the
 * rollback driven by real traffic. Loads are counted per name, so a test sees a double load, and so
 * are the chat completions answered per model name.
 *
 * <p>All state is guarded by this object's lock.
 */
final class ModelServerSimulation {

  /** Share of calls answered as failed tasks, and milliseconds added to every call. */
  record Quality(double failureRate, long addedLatencyMs) {
    static final Quality PERFECT = new Quality(0.0, 0);
  }

  /** A vLLM answer: status and either plain text or an error object. */
  record Reply(int status, String text, ObjectNode error) {}

  /** The content of an answer that fails its task (the agent's task result reports the failure). */
  static final String FAILED_ANSWER = "I cannot complete this task.";

  private record Adapter(String name, String path, Instant loadedAt) {}

  private final ObjectMapper mapper;
  private final String baseModel;
  private final Map<String, Adapter> adapters = new LinkedHashMap<>();
  private final Map<String, Quality> qualities = new LinkedHashMap<>();
  private final Map<String, Long> loads = new LinkedHashMap<>();
  // Chat completions answered per requested model name: a test checks at the model server which
  // version really answered, independently of what the gateway says.
  private final Map<String, Long> served = new LinkedHashMap<>();
  // Adapters unloaded and not loaded again: their names get vLLM's 404, as after a vLLM restart.
  // Other names are answered as the base model (vLLM refuses them too), so that a static set-up
  // works whatever model name its agents send.
  private final java.util.Set<String> unloaded = new java.util.HashSet<>();

  // How late load answers come (the load itself acts at once), as from a vLLM slower than its client's timeout.
  private volatile java.time.Duration loadAnswerDelay = java.time.Duration.ZERO;

  ModelServerSimulation(ObjectMapper mapper, String baseModel) {
    this.mapper = mapper;
    this.baseModel = baseModel;
  }

  /** vLLM's {@code ModelList}: the base model first, then each loaded adapter. */
  synchronized ObjectNode models() {
    ObjectNode out = mapper.createObjectNode().put("object", "list");
    ArrayNode data = out.putArray("data");
    long created = Instant.now().getEpochSecond();
    data.add(card(baseModel, baseModel, null, created));
    for (Adapter a : adapters.values()) {
      data.add(card(a.name(), a.path(), baseModel, a.loadedAt().getEpochSecond()));
    }
    return out;
  }

  synchronized Reply load(JsonNode body) {
    String name = body.path("lora_name").asText("");
    String path = body.path("lora_path").asText("");
    if (name.isEmpty() || path.isEmpty()) {
      return error(400, "InvalidUserInput", "Both 'lora_name' and 'lora_path' must be provided.");
    }
    if (adapters.containsKey(name)) {
      return error(400, "InvalidUserInput", "The lora adapter '" + name + "' has already been loaded.");
    }
    if (!java.nio.file.Files.exists(java.nio.file.Path.of(stripFileScheme(path)))) {
      return error(404, "NotFoundError", "No adapter found for " + path);
    }
    adapters.put(name, new Adapter(name, path, Instant.now()));
    unloaded.remove(name);
    loads.merge(name, 1L, Long::sum);
    return new Reply(200, "Success: LoRA adapter '" + name + "' added successfully.", null);
  }

  synchronized Reply unload(JsonNode body) {
    String name = body.path("lora_name").asText("");
    if (name.isEmpty()) {
      return error(400, "InvalidUserInput", "either 'lora_name' and 'lora_int_id' needs to be provided.");
    }
    if (adapters.remove(name) == null) {
      return error(404, "NotFoundError", "The lora adapter '" + name + "' cannot be found.");
    }
    unloaded.add(name);
    return new Reply(200, "Success: LoRA adapter '" + name + "' removed successfully.", null);
  }

  java.time.Duration loadAnswerDelay() {
    return loadAnswerDelay;
  }

  /** {@code {"ms": N}}, 0..600000: how late load answers come; empty when set, else the error text. */
  Optional<String> setLoadAnswerDelay(JsonNode body) {
    JsonNode ms = body.path("ms");
    if (!ms.canConvertToLong() || !ms.isIntegralNumber() || ms.asLong() < 0 || ms.asLong() > 600_000) {
      return Optional.of("ms: must be a whole number between 0 and 600000");
    }
    loadAnswerDelay = java.time.Duration.ofMillis(ms.asLong());
    return Optional.empty();
  }

  /** Whether {@code model} names a LoRA adapter loaded now. */
  synchronized boolean isLoadedAdapter(String model) {
    return adapters.containsKey(model);
  }

  /** Whether {@code model} is an adapter that was unloaded and not loaded again (vLLM: 404). */
  synchronized boolean wasUnloaded(String model) {
    return unloaded.contains(model);
  }

  /** Counts one chat completion answered as {@code model}. */
  synchronized void served(String model) {
    served.merge(model, 1L, Long::sum);
  }

  /** The quality set for a model name (perfect unless set). */
  synchronized Quality qualityOf(String model) {
    return model == null ? Quality.PERFECT : qualities.getOrDefault(model, Quality.PERFECT);
  }

  /**
   * Whether this call of {@code model} answers as a failed task: deterministic per request text, so
   * that {@code failureRate} of distinct requests fail and a retried request gets the same answer.
   */
  boolean failsTask(String model, String requestText) {
    double rate = qualityOf(model).failureRate();
    if (rate <= 0) {
      return false;
    }
    long h = java.util.UUID.nameUUIDFromBytes((model + "\n" + requestText)
        .getBytes(java.nio.charset.StandardCharsets.UTF_8)).getMostSignificantBits();
    return (h >>> 11) * 0x1.0p-53 < rate;
  }

  /** Sets a model's quality; empty when a value is out of range (the error text otherwise). */
  synchronized Optional<String> setQuality(String model, JsonNode body) {
    // Read leniently, {"failure_rate":0.3} or {"failureRate":"0.3"} set a perfect quality with a 200: the
    // candidate never got worse and a trial waited for a rollback that could not come (trial t92).
    if (!body.isObject()) {
      return Optional.of("the body must be a JSON object: {\"failureRate\":0.3,\"addedLatencyMs\":200}");
    }
    for (var it = body.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!key.equals("failureRate") && !key.equals("addedLatencyMs")) {
        return Optional.of(key + ": unknown field; the fields are failureRate (0 to 1) and addedLatencyMs");
      }
    }
    JsonNode rateNode = body.path("failureRate");
    JsonNode latencyNode = body.path("addedLatencyMs");
    if (!rateNode.isMissingNode() && !rateNode.isNumber()) {
      return Optional.of("failureRate: must be a number between 0 and 1");
    }
    if (!latencyNode.isMissingNode() && !(latencyNode.isIntegralNumber() && latencyNode.canConvertToLong())) {
      return Optional.of("addedLatencyMs: must be a whole number between 0 and 600000");
    }
    double failureRate = rateNode.asDouble(0.0);
    long latency = latencyNode.asLong(0);
    if (!(failureRate >= 0 && failureRate <= 1)) {
      return Optional.of("failureRate: must be between 0 and 1");
    }
    if (latency < 0 || latency > 600_000) {
      return Optional.of("addedLatencyMs: must be between 0 and 600000");
    }
    qualities.put(model, new Quality(failureRate, latency));
    return Optional.empty();
  }

  /** Admin view: adapters loaded now, load calls accepted and completions answered per name, qualities. */
  synchronized ObjectNode stats() {
    ObjectNode out = mapper.createObjectNode().put("baseModel", baseModel);
    ArrayNode loaded = out.putArray("loaded");
    adapters.keySet().forEach(loaded::add);
    ObjectNode counts = out.putObject("loads");
    loads.forEach(counts::put);
    ObjectNode answered = out.putObject("served");
    served.forEach(answered::put);
    ObjectNode q = out.putObject("qualities");
    qualities.forEach((k, v) -> q.putObject(k).put("failureRate", v.failureRate())
        .put("addedLatencyMs", v.addedLatencyMs()));
    return out;
  }

  private ObjectNode card(String id, String root, String parent, long created) {
    ObjectNode card = mapper.createObjectNode()
        .put("id", id)
        .put("object", "model")
        .put("created", created)
        .put("owned_by", "vllm")
        .put("root", root);
    if (parent == null) {
      card.putNull("parent");
    } else {
      card.put("parent", parent);
    }
    card.putArray("permission");
    return card;
  }

  private Reply error(int status, String type, String message) {
    ObjectNode e = mapper.createObjectNode()
        .put("object", "error")
        .put("message", message)
        .put("type", type);
    e.putNull("param");
    e.put("code", status);
    return new Reply(status, null, e);
  }

  private static String stripFileScheme(String path) {
    return path.startsWith("file://") ? path.substring("file://".length()) : path;
  }
}
