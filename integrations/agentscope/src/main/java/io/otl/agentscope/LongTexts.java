package io.otl.agentscope;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import io.otl.core.session.Desensitizer;
import io.otl.core.session.TextPrefixes;

/**
 * Fits the hook's texts into the node's {@code data-collector.max-text-length}, as the gateway and the
 * OpenTelemetry door fit theirs: the events API refuses a longer text (400), and the agent already has
 * it, so the hook cannot send it again shorter. A tool result over the limit (a fetched web page, a file
 * read whole) was dropped with its tool call (trial t80). Personal data is replaced before the cut, so the
 * cut never leaves a fragment of an e-mail address the node's patterns no longer recognise.
 */
final class LongTexts {
  private final Desensitizer desensitizer;
  private final int limit;

  LongTexts(Desensitizer desensitizer, int limit) {
    this.desensitizer = desensitizer;
    this.limit = limit;
  }

  /** The text, or its start (desensitized) when it is longer than the limit. */
  String text(String raw) {
    if (raw == null || raw.length() <= limit) return raw;
    return TextPrefixes.prefix(desensitizer.apply(raw), limit);
  }

  /**
   * The value, or, when its JSON text is longer than the limit, a string holding the start of that text
   * (desensitized), short enough that its own JSON rendering fits, as the node measures it.
   */
  JsonNode json(JsonNode raw) {
    if (raw == null) return null;
    String text = raw.toString();
    if (text.length() <= limit) return raw;
    TextNode cut = TextPrefixes.jsonString(desensitizer.apply(raw.isTextual() ? raw.textValue() : text), limit);
    return cut != null ? cut : TextNode.valueOf(""); // a limit under 2: the node refuses it, as before
  }
}
