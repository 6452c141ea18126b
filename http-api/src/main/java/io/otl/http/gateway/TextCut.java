package io.otl.http.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import io.otl.core.session.Desensitizer;
import io.otl.core.session.TextPrefixes;

/**
 * Fits what the gateway records into {@code data-collector.max-text-length}. The HTTP events API
 * answers 400 to a text over the limit and the client sends it again shorter; the gateway cannot:
 * the agent already has its answer. So the text is stored cut at the limit and the event says so
 * ({@code truncated}: field → original length), rather than the whole turn being lost.
 *
 * <p>The text is desensitized before it is cut, so a phone number or e-mail address split by the
 * cut can never reach the journal as a fragment the session's patterns no longer recognise.
 *
 * <p>The OpenTelemetry door cuts with it too: each chat span re-sends the whole history, so a text
 * over the limit, refused, took every later span of its session with it.
 */
public final class TextCut {
  private final Desensitizer desensitizer;
  private final int limit;

  /** @param limit the sessions' {@code data-collector.max-text-length} */
  public TextCut(Desensitizer desensitizer, int limit) {
    if (limit < 1) throw new IllegalArgumentException("max-text-length must be at least 1, not " + limit);
    this.desensitizer = desensitizer;
    this.limit = limit;
  }

  /** @param originalLength the length before the cut, or null when the value was stored whole */
  public record Text(String value, Integer originalLength) {}

  /** @param originalLength the length of the JSON text before the cut, or null when stored whole */
  public record Json(JsonNode value, Integer originalLength) {}

  /**
   * The text to store: whole, or cut at the limit. A NUL or half an emoji (a lone surrogate, from a
   * model server's "\ud83d" or a cut that split a pair) becomes U+FFFD: the events API refuses them, but
   * an answer cannot be sent again; stored, GET answered "\\ud83d" (which strict JSON parsers refuse) and exports "?" (trial t102).
   */
  public Text text(String raw) {
    raw = io.otl.core.StrictValues.storable(raw);
    if (raw == null || raw.length() <= limit) return new Text(raw, null);
    return new Text(TextPrefixes.prefix(desensitizer.apply(raw), limit), raw.length());
  }

  /**
   * A JSON value whose text is over the limit becomes a string: the start of its (desensitized)
   * JSON text, short enough that the string's own JSON rendering (quotes, escapes) fits, as the
   * session measures it.
   */
  public Json json(JsonNode raw) {
    if (raw == null) return new Json(null, null);
    String text = raw.toString();
    if (text.length() <= limit) return new Json(raw, null);
    // null for a limit under 2: not even "" fits
    return new Json(TextPrefixes.jsonString(desensitizer.apply(text), limit), text.length());
  }

  public boolean fits(String text) {
    return text == null || text.length() <= limit;
  }
}
