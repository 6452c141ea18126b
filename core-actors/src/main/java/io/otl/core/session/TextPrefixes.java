package io.otl.core.session;

import com.fasterxml.jackson.databind.node.TextNode;

/**
 * The start of a text that fits {@code data-collector.max-text-length}, for the doors that cannot send
 * a text again shorter (the gateway, the OpenTelemetry door, the AgentScope hook: the agent already has
 * it). Here, beside the session that measures the limit, because the hook does not depend on the HTTP
 * module that the other two share.
 */
public final class TextPrefixes {
  private TextPrefixes() {}

  /** The first {@code n} characters, one fewer when the n-th would split a surrogate pair. */
  public static String prefix(String s, int n) {
    if (s.length() <= n) return s;
    int end = n > 0 && Character.isHighSurrogate(s.charAt(n - 1)) ? n - 1 : n;
    return s.substring(0, end);
  }

  /**
   * A start of {@code text} whose rendering as a JSON string (quotes, escapes) is at most {@code limit}
   * characters, as the session measures a JSON value; null when not even {@code ""} fits. Each step
   * takes off what the rendering is over, so a text of many escapes is cut a little short of the limit.
   */
  public static TextNode jsonString(String text, int limit) {
    int n = Math.min(text.length(), limit);
    while (true) {
      TextNode cut = TextNode.valueOf(prefix(text, n));
      int rendered = cut.toString().length();
      if (rendered <= limit) return cut;
      if (n == 0) return null;
      n = Math.max(0, Math.min(n - 1, n - (rendered - limit)));
    }
  }
}
