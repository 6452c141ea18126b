package io.otl.node.simulator;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.Map;

/**
 * What a Ray job submission reserves and the environment it asks for, as Ray's JobSubmitRequest
 * carries them. Absent amounts are answered as 0 (the simulator reserves nothing), not null, so
 * clients that do arithmetic on them need no special case.
 */
record Resources(double numCpus, double numGpus, long memory, ObjectNode custom, ObjectNode runtimeEnv) {

  /** Reads and checks the fields of a submission; a wrong type or a negative amount is refused. */
  static Resources of(JsonNode request) {
    return new Resources(
        amount(request, "entrypoint_num_cpus"),
        amount(request, "entrypoint_num_gpus"),
        memory(request),
        customResources(request),
        object(request, "runtime_env"));
  }

  /** True when Ray would say a pending job "may be waiting for resources". */
  boolean reserves() {
    return numCpus > 0 || numGpus > 0 || memory > 0 || !custom.isEmpty();
  }

  /** The JobInfo fields Ray keeps for these (entrypoint_num_cpus, …, entrypoint_resources). */
  void writeTo(ObjectNode job) {
    job.put("entrypoint_num_cpus", numCpus);
    job.put("entrypoint_num_gpus", numGpus);
    job.put("entrypoint_memory", memory);
    job.set("entrypoint_resources", custom.deepCopy());
  }

  private static double amount(JsonNode request, String field) {
    JsonNode v = request.path(field);
    if (v.isMissingNode() || v.isNull()) {
      return 0;
    }
    if (!v.isNumber() || v.asDouble() < 0) {
      throw new IllegalArgumentException(field + " must be a non-negative number, got " + v);
    }
    return v.asDouble();
  }

  private static long memory(JsonNode request) {
    JsonNode v = request.path("entrypoint_memory");
    if (v.isMissingNode() || v.isNull()) {
      return 0;
    }
    if (!v.isIntegralNumber() || v.asLong() < 0) {
      throw new IllegalArgumentException("entrypoint_memory must be a non-negative integer (bytes), got " + v);
    }
    return v.asLong();
  }

  private static ObjectNode customResources(JsonNode request) {
    ObjectNode custom = object(request, "entrypoint_resources");
    for (Iterator<Map.Entry<String, JsonNode>> it = custom.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      if (!e.getValue().isNumber() || e.getValue().asDouble() < 0) {
        throw new IllegalArgumentException("entrypoint_resources values must be non-negative numbers, got "
            + e.getKey() + "=" + e.getValue());
      }
    }
    return custom;
  }

  private static ObjectNode object(JsonNode request, String field) {
    JsonNode v = request.path(field);
    if (v.isMissingNode() || v.isNull()) {
      return JsonNodeFactory.instance.objectNode();
    }
    if (!v.isObject()) {
      throw new IllegalArgumentException(field + " must be a dict, got " + v.getNodeType());
    }
    return ((ObjectNode) v).deepCopy();
  }
}
