package io.otl.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.Iterator;
import java.util.Map;
import java.util.regex.Pattern;
import org.apache.pekko.util.ByteString;

/**
 * Request bodies as one strict JSON object (issue #14.7): one document and nothing after it, no
 * duplicate keys, no NUL characters or lone surrogates in strings or keys, only finite numbers,
 * and no deeper nesting than the configured limit. Everything refused is a 400 naming the JSON
 * path, before anything reaches an entity. Lax input would otherwise be stored in a form that
 * breaks exports later (Infinity, keys lost to "last wins", depth past Jackson's export limit).
 */
public final class StrictJson {
  /** The default of {@code agentscope.training.http.max-json-depth}. */
  public static final int DEFAULT_MAX_DEPTH = 32;

  private static final ObjectMapper READER = Json.MAPPER.copy()
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
      .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

  /** Keys shown in error paths as sent; others (digits, e-mail signs …) as {@code *}, never echoed. */
  private static final Pattern PLAIN_KEY = Pattern.compile("[A-Za-z_-]{1,64}");

  private StrictJson() {}

  /** The body as a JSON object, or a 400 naming what is wrong. */
  public static JsonNode readObject(ByteString bytes, int maxDepth) {
    if (bytes.isEmpty()) throw BadRequest.invalid("the request body is empty; a JSON object is expected");
    JsonNode node;
    try {
      node = READER.readTree(bytes.toArray());
    } catch (IOException e) {
      String m = e.getMessage() == null ? "" : e.getMessage().split("\n")[0];
      throw new BadRequest(400, "invalid_json", "the request body is not valid JSON: " + m);
    }
    if (node == null || !node.isObject()) throw BadRequest.invalid("the request body must be a JSON object");
    check(node, "body", 1, maxDepth);
    return node;
  }

  private static void check(JsonNode node, String path, int depth, int maxDepth) {
    if (node.isContainerNode() && depth > maxDepth) {
      throw new BadRequest(400, "too_deep", path + " is nested " + depth + " levels deep; at most " + maxDepth
          + " are accepted (agentscope.training.http.max-json-depth)");
    }
    if (node.isObject()) {
      Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> f = fields.next();
        String child = path + "." + (PLAIN_KEY.matcher(f.getKey()).matches() ? f.getKey() : "*");
        String problem = textProblem(f.getKey());
        if (problem != null) throw BadRequest.invalid("a key of " + path + " " + problem);
        check(f.getValue(), child, depth + 1, maxDepth);
      }
    } else if (node.isArray()) {
      for (int i = 0; i < node.size(); i++) check(node.get(i), path + "[" + i + "]", depth + 1, maxDepth);
    } else if (node.isTextual()) {
      String problem = textProblem(node.textValue());
      if (problem != null) throw BadRequest.invalid(path + " " + problem);
    } else if (node.isFloatingPointNumber() && !Double.isFinite(node.doubleValue())) {
      throw BadRequest.invalid(path + " is a number too large for a double (it would be stored as Infinity)");
    }
  }

  /** Why a string cannot be stored as sent, or null. */
  static String textProblem(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == 0) return "contains a NUL character (\\u0000)";
      if (Character.isHighSurrogate(c)) {
        if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
          i++;
          continue;
        }
        return "contains a lone UTF-16 surrogate (an escaped \\ud800-\\udbff without its pair)";
      }
      if (Character.isLowSurrogate(c)) return "contains a lone UTF-16 surrogate (\\udc00-\\udfff without its pair)";
    }
    return null;
  }
}
