package io.otl.core.session;

import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The inference gateway's message ids: {@code gw:m:<hash>} for a message's first occurrence in a
 * session and {@code gw:m:<hash>.<n>} for its n-th repetition, where the hash covers role, stored text
 * and tool call ids. Requests resend the conversation, so a message sent again gets the id it was
 * stored under and is a duplicate. Here, not in the gateway, because the session must also tell a new
 * answer from a stored one when both have one id: see {@link #nextFree}.
 */
public final class GatewayMessageIds {
  public static final String PREFIX = "gw:m:";
  /**
   * A message id as {@link #numbered} writes it: the hash (hex, or with its digits as g–p), then ".n";
   * an answer cut short (the client left, the upstream failed mid-stream) has ":partial" after it.
   */
  private static final Pattern FORM = Pattern.compile("gw:m:([0-9a-p]+)(?:\\.([1-9][0-9]{0,8}))?(:partial)?");

  private GatewayMessageIds() {}

  /** The id of the {@code n}th occurrence (from 0) of the message whose hash is {@code hash}. */
  public static String numbered(String hash, int n) {
    return opaque(PREFIX, hash, n == 0 ? "" : "." + n);
  }

  /**
   * {@code prefix + hex + suffix}, unless the hex holds a phone- or ID-shaped digit run: then the
   * same hash with its digits spelled as the letters g–p. The session's id check no longer refuses
   * such a run inside a standalone hex token ({@link PiiRules#outsideHexToken}), but ids must not
   * change: a resent message gets the id it was recorded under, also in sessions recorded by the
   * builds whose check did refuse them.
   */
  public static String opaque(String prefix, String hex, String suffix) {
    String id = prefix + hex + suffix;
    if (!PiiRules.PHONE.matcher(id).find() && !PiiRules.ID_CARD.matcher(id).find()) return id;
    StringBuilder letters = new StringBuilder(hex.length());
    for (char c : hex.toCharArray()) letters.append(c >= '0' && c <= '9' ? (char) ('g' + (c - '0')) : c);
    return prefix + letters + suffix;
  }

  /**
   * For a gateway message id the session already holds: the id of the same message's next occurrence
   * that it does not hold, or null when {@code id} is not of the gateway's form (an events-API client may
   * send any id under the prefix: it is then the client's idempotency key, never renumbered). A model's answer is
   * numbered by the request it answers, so an answer the same as one stored but no longer resent (the
   * agent edited that turn, or slid its context window past it on a node that does not know the
   * session's ids) got the stored answer's id, and the session dropped the new answer as a duplicate:
   * silently, and its msgId then named nothing for feedback (trial t73).
   */
  static String nextFree(String id, Predicate<String> held) {
    Matcher m = FORM.matcher(id);
    if (!m.matches()) return null;
    String hash = hexOf(m.group(1));
    int n = m.group(2) == null ? 0 : Integer.parseInt(m.group(2));
    String partial = m.group(3) == null ? "" : m.group(3);
    String next;
    do {
      next = numbered(hash, ++n) + partial;
    } while (held.test(next));
    return next;
  }

  /** The hash as hex again (a spelled-out hash has letters g–p where its digits were). */
  private static String hexOf(String written) {
    StringBuilder hex = new StringBuilder(written.length());
    for (char c : written.toCharArray()) hex.append(c >= 'g' && c <= 'p' ? (char) ('0' + (c - 'g')) : c);
    return hex.toString();
  }
}
