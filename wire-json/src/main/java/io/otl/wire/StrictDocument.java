package io.otl.wire;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.CharConversionException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * One JSON document as every edge reads client data (HTTP bodies, the gateway, OTLP, Kafka records):
 * nothing after it, no key twice ("last wins" would lose data), and well-formed UTF-8. Jackson
 * decodes overlong sequences ({@code C0 AF} is '/', {@code C0 80} a NUL) that RFC 3629 forbids, so a
 * value a strict client would refuse was stored as if it had been sent correctly. The checks of
 * {@link JsonLimits} are the caller's; an exception's words go through {@link JsonParseProblem}.
 */
public final class StrictDocument {
  private static final ObjectMapper READER = new ObjectMapper()
      .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
      .enable(DeserializationFeature.FAIL_ON_READING_DUP_TREE_KEY)
      .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

  private StrictDocument() {}

  public static JsonNode read(byte[] bytes) throws IOException {
    requireUtf8(bytes);
    return READER.readTree(bytes);
  }

  /** A document held in a string (an OTLP attribute, a tool call's arguments): already decoded text. */
  public static JsonNode read(String text) throws IOException {
    return READER.readTree(text);
  }

  private static void requireUtf8(byte[] bytes) throws IOException {
    int firstNonAscii = 0;
    while (firstNonAscii < bytes.length && bytes[firstNonAscii] >= 0) firstNonAscii++;
    if (firstNonAscii == bytes.length) return; // plain ASCII, the common case: nothing to decode
    ByteBuffer in = ByteBuffer.wrap(bytes);
    CoderResult r = StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT)
        .decode(in, CharBuffer.allocate(bytes.length), true);
    if (r.isError()) {
      throw new CharConversionException("invalid UTF-8 at byte " + in.position()
          + " (overlong, truncated or not UTF-8 at all)");
    }
  }
}
