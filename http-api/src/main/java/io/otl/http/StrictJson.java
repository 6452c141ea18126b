package io.otl.http;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.wire.JsonLimits;
import io.otl.wire.JsonParseProblem;
import io.otl.wire.StrictDocument;
import java.io.IOException;
import org.apache.pekko.util.ByteString;

/**
 * Request bodies as one strict JSON object (issue #14.7): one document and nothing after it, no
 * duplicate keys, and what {@link JsonLimits} requires (no NUL or lone surrogates, finite numbers,
 * no deeper nesting than the configured limit). Everything refused is a 400 naming the JSON
 * path, before anything reaches an entity. Lax input would otherwise be stored in a form that
 * breaks exports later (Infinity, keys lost to "last wins", depth past Jackson's export limit).
 */
public final class StrictJson {
  /** The default of {@code agentscope.training.http.max-json-depth}. */
  public static final int DEFAULT_MAX_DEPTH = JsonLimits.DEFAULT_MAX_DEPTH;

  private StrictJson() {}

  /** The body as a JSON object, or a 400 naming what is wrong. */
  public static JsonNode readObject(ByteString bytes, int maxDepth) {
    if (bytes.isEmpty()) throw BadRequest.invalid("the request body is empty; a JSON object is expected");
    JsonNode node;
    try {
      node = StrictDocument.read(bytes.toArray());
    } catch (IOException e) {
      if (JsonParseProblem.tooDeep(e)) {
        // Jackson stops at 1000 levels, long before the limit below is checked: the same answer as for 33 levels.
        throw new BadRequest(400, "too_deep", "the request body is nested more than " + maxDepth + " levels deep; at "
            + "most " + maxDepth + " are accepted (agentscope.training.http.max-json-depth)");
      }
      throw new BadRequest(400, "invalid_json", "the request body is not valid JSON: " + JsonParseProblem.describe(e));
    }
    if (node == null || !node.isObject()) throw BadRequest.invalid("the request body must be a JSON object");
    JsonLimits.Problem p = JsonLimits.problem(node, "body", maxDepth);
    if (p != null && p.tooDeep()) {
      throw new BadRequest(400, "too_deep", p.message() + " (agentscope.training.http.max-json-depth)");
    }
    if (p != null) throw BadRequest.invalid(p.message());
    return node;
  }
}
