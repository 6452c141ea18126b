package io.otl.http.otlp;

import io.otl.core.session.SessionInput;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a chat span's messages sit in the conversation a session holds. A message's id is its
 * position in the conversation plus a hash of it ({@code otlp:m<position>:<hash>}, its reasoning
 * {@code otlp:r…}); the span gives only its position in what the span carries. An agent that sends
 * the whole conversation on each chat span (the usual case) carries each message at its position;
 * one that trims or slides its context window (the system prompt and its last n messages) does not:
 * mapped by the span alone, its resent messages were stored again under new positions, and a new
 * "continue" that landed on the position of a stored "continue" was taken for it and lost (trial t95:
 * 22 messages stored instead of 15, two "continue"s of four lost).
 *
 * <p>So the span is placed against the ids the session holds. Its own positions are kept when they
 * contradict nothing stored (a whole history, a first span, a retried one): the ids are those earlier
 * builds gave, so their journals dedupe as before. Otherwise it is read as a head (its first messages,
 * at their own positions: the system prompt) and a body shifted by {@code d} positions so that the
 * body's messages the session holds are where it holds them and none contradicts a stored message
 * (the longest suffix of the stored conversation that begins the body, or, for a retried or late
 * span, the place that holds the whole body); the placement that finds the most of the span's
 * messages stored wins, and only one that finds more than the span's own positions do. A span with no
 * stored message in its body (a window that slid past everything stored: turns lost, or arriving far
 * out of order) keeps its own positions, as before.
 */
final class ConversationAlignment {
  /**
   * A positioned id as {@link GenAiMapper} writes it: kind (message or reasoning), position, hash (hex or g–p).
   * Positions past a million are not read: an events-API client may store any id, and one naming position
   * 999999999 would have every placement in its session allocate a bit per position.
   */
  private static final Pattern POSITIONED = Pattern.compile("otlp:([mr])([0-9]{1,6}):([0-9a-p]+)");
  /** Messages at the start of a window that keep their positions (system prompts, a pinned task). */
  static final int MAX_HEAD = 8;

  /**
   * Where the session holds each message: kind and hash → positions (an id's hash is the same at every
   * position, spelled g–p only where the whole id reads as personal data), and which positions hold one.
   */
  static final class Held {
    private final Map<String, BitSet> positions = new HashMap<>();
    private final BitSet occupied = new BitSet();

    Held(Set<String> stored) {
      for (String id : stored) add(id);
    }

    /** The session will hold {@code id} too (an input sent before it in the same request). */
    void add(String id) {
      Matcher m = id == null ? null : POSITIONED.matcher(id);
      if (m == null || !m.matches()) return;
      int position = Integer.parseInt(m.group(2));
      occupied.set(position);
      positions.computeIfAbsent(m.group(1) + hexOf(m.group(3)), k -> new BitSet()).set(position);
    }

    private BitSet of(String kind, String hex) {
      return hex == null ? EMPTY : positions.getOrDefault(kind + hex, EMPTY);
    }
  }

  private static final BitSet EMPTY = new BitSet();

  /**
   * One id of a span's message, as the positions where the session holds it: under its hash, and under
   * the hash of its text as sent (its former id; empty when none). Looked up once per span.
   */
  private record Key(BitSet at, BitSet formerAt) {
    boolean heldAt(int position) {
      return at.get(position) || formerAt.get(position);
    }
  }

  /**
   * Placements a span may try, counted in messages compared: a session holding thousands of identical
   * messages ("continue") and a span contradicting it near its end made every shift compare most of the
   * span (tens of millions of comparisons per request). Past this the best placement found so far is taken.
   */
  static final int MAX_COMPARISONS = 200_000;

  private enum Fit { NONE, NEW, MATCH, CONFLICT }

  private ConversationAlignment() {}

  /**
   * A chat span's inputs (as {@link GenAiMapper} maps them, at the span's own positions) with their
   * message ids at the positions the session's conversation gives them; the same list when those are
   * the span's own.
   */
  static List<SessionInput> align(List<SessionInput> inputs, Held held) {
    List<List<Key>> window = new ArrayList<>();
    for (SessionInput in : inputs) {
      Matcher m = POSITIONED.matcher(in.eventId());
      if (!m.matches()) continue;
      int index = Integer.parseInt(m.group(2));
      while (window.size() <= index) window.add(new ArrayList<>());
      Matcher former = in.formerId() == null ? null : POSITIONED.matcher(in.formerId());
      window.get(index).add(new Key(held.of(m.group(1), hexOf(m.group(3))),
          former != null && former.matches() ? held.of(m.group(1), hexOf(former.group(3))) : EMPTY));
    }
    int size = window.size();
    int end = held.occupied.length(); // one past the last position the session holds
    if (size == 0 || end == 0) return inputs;
    int ownScore = 0;
    boolean ownFits = true;
    int head = 0; // how many of the first messages are stored where the span has them
    boolean inHead = true;
    for (int i = 0; i < size; i++) {
      Fit f = fit(window.get(i), i, held);
      if (f == Fit.MATCH) ownScore++;
      if (f == Fit.CONFLICT) ownFits = false;
      inHead &= f == Fit.MATCH || f == Fit.NONE;
      if (inHead) head = i + 1;
    }
    if (ownFits) return inputs;
    int bestScore = ownScore;
    int bestHead = -1;
    int bestShift = 0;
    int budget = MAX_COMPARISONS;
    for (int h = 0; h <= Math.min(head, MAX_HEAD) && budget > 0; h++) {
      int headScore = 0;
      for (int i = 0; i < h; i++) if (fit(window.get(i), i, held) == Fit.MATCH) headScore++;
      // the shifts that put some message of the body where the session holds it: no other can win
      java.util.TreeSet<Integer> shifts = new java.util.TreeSet<>();
      for (int i = h; i < size; i++) {
        for (Key k : window.get(i)) {
          for (BitSet at : List.of(k.at(), k.formerAt())) {
            for (int p = at.nextSetBit(i + 1); p >= 0 && budget > 0; p = at.nextSetBit(p + 1)) {
              shifts.add(p - i);
              budget--;
            }
          }
        }
      }
      for (int d : shifts) {
        if (budget <= 0) break;
        int found = 0;
        boolean fits = true;
        for (int i = h; i < size && fits; i++) {
          budget--;
          Fit f = fit(window.get(i), i + d, held);
          if (f == Fit.CONFLICT) fits = false;
          if (f == Fit.MATCH) found++;
        }
        // the latest of equally good places: a window resent in a conversation that repeats itself is its newest turn
        int score = headScore + found;
        if (fits && found > 0 && score > ownScore && (bestHead < 0 || score >= bestScore)) {
          bestScore = score;
          bestHead = h;
          bestShift = d;
        }
      }
    }
    if (bestHead < 0) return inputs;
    List<SessionInput> out = new ArrayList<>(inputs.size());
    for (SessionInput in : inputs) out.add(moved(in, bestHead, bestShift));
    return out;
  }

  /** How the message with {@code keys} fits at {@code position} of the conversation the session holds. */
  private static Fit fit(List<Key> keys, int position, Held held) {
    if (keys.isEmpty()) return Fit.NONE; // a role the node does not know: nothing of it is stored
    for (Key k : keys) {
      if (k.heldAt(position)) return Fit.MATCH;
    }
    return held.occupied.get(position) ? Fit.CONFLICT : Fit.NEW;
  }

  /** The input with its ids moved: the first {@code head} messages' stay, the others' move by {@code shift}. */
  private static SessionInput moved(SessionInput in, int head, int shift) {
    Matcher m = POSITIONED.matcher(in.eventId());
    if (!m.matches()) return in;
    int index = Integer.parseInt(m.group(2));
    if (index < head) return in;
    int position = index + shift;
    String id = GenAiMapper.opaque("otlp:" + m.group(1) + position + ":", hexOf(m.group(3)));
    String former = null;
    if (in.formerId() != null) {
      Matcher f = POSITIONED.matcher(in.formerId());
      former = f.matches()
          ? GenAiMapper.opaque("otlp:" + f.group(1) + position + ":", hexOf(f.group(3))) : in.formerId();
    }
    if (in instanceof SessionInput.Message msg) {
      return new SessionInput.Message(id, msg.at(), msg.role(), msg.content(), msg.msgId(), msg.latencyMs(),
          msg.inference(), msg.truncated(), former);
    }
    if (in instanceof SessionInput.Reasoning r) {
      return new SessionInput.Reasoning(id, r.at(), r.index(), r.thought(), r.action(), r.observation(), former);
    }
    return in;
  }

  /** The hash as hex again: an id that read as personal data has its digits spelled as the letters g–p. */
  private static String hexOf(String written) {
    StringBuilder hex = new StringBuilder(written.length());
    for (char c : written.toCharArray()) hex.append(c >= 'g' && c <= 'p' ? (char) ('0' + (c - 'g')) : c);
    return hex.toString();
  }
}
