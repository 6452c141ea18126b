package io.otl.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.wire.JsonLimits;
import io.otl.wire.JsonParseProblem;
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

  private static final ObjectMapper READER = Json.MAPPER.copy()
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
      .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

  private StrictJson() {}

  /** The body as a JSON object, or a 400 naming what is wrong. */
  public static JsonNode readObject(ByteString bytes, int maxDepth) {
    if (bytes.isEmpty()) throw BadRequest.invalid("the request body is empty; a JSON object is expected");
    JsonNode node;
    try {
      node = readDocument(bytes.toArray());
    } catch (IOException e) {
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

  /**
   * One JSON document and nothing after it, no key twice, and well-formed UTF-8: Jackson decodes
   * overlong sequences ({@code C0 AF} is '/', {@code C0 80} a NUL) that RFC 3629 forbids, so a body
   * a strict client would refuse was stored as if it had been sent correctly. The checks of
   * {@link JsonLimits} are the caller's; the message of the exception goes through
   * {@link io.otl.wire.JsonParseProblem#describe}.
   */
  public static JsonNode readDocument(byte[] bytes) throws IOException {
    requireUtf8(bytes);
    return READER.readTree(bytes);
  }

  /** A JSON document held in a string (an OTLP attribute), as strictly as {@link #readDocument(byte[])}. */
  public static JsonNode readDocument(String text) throws IOException {
    return READER.readTree(text);
  }

  private static void requireUtf8(byte[] bytes) throws IOException {
    int firstNonAscii = 0;
    while (firstNonAscii < bytes.length && bytes[firstNonAscii] >= 0) firstNonAscii++;
    if (firstNonAscii == bytes.length) return;
    java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(bytes);
    java.nio.charset.CoderResult r = java.nio.charset.StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(java.nio.charset.CodingErrorAction.REPORT)
        .onUnmappableCharacter(java.nio.charset.CodingErrorAction.REPORT)
        .decode(in, java.nio.CharBuffer.allocate(bytes.length), true);
    if (r.isError()) {
      throw new java.io.CharConversionException("invalid UTF-8 at byte " + in.position()
          + " (overlong, truncated or not UTF-8 at all)");
    }
  }
}
