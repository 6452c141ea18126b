package io.otl.http;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One page of a training job's logs, by line: {@code offset} is the index of the first line
 * returned (0-based), {@code nextOffset} the one to ask for next. Lines, not characters, so a
 * client never receives half a line and can poll with {@code offset=nextOffset} as the log grows.
 *
 * @param points the trainer's {@code step}/{@code loss} figures found on the page's lines
 * @param note why the page is empty when there is nothing to read (no logs kept by the backend,
 *     job not submitted yet), else null
 */
public record LogPage(
    String jobId,
    String backend,
    int offset,
    int limit,
    int totalLines,
    int nextOffset,
    List<String> lines,
    List<StepLoss> points,
    String note) {

  public static final int DEFAULT_LIMIT = 200;
  public static final int MAX_LIMIT = 2000;

  /** One training step as the trainer printed it. */
  public record StepLoss(long step, double loss) {}

  /**
   * "step 3 … loss 0.41", "step:3 - actor/pg_loss:0.41", "Step 3/10: loss=0.41": a step number,
   * then on the same line a key ending in "loss" and its number. Only the first loss per line.
   */
  private static final Pattern STEP = Pattern.compile("\\bstep\\b\\s*[:=]?\\s*(\\d+)", Pattern.CASE_INSENSITIVE);
  private static final Pattern LOSS = Pattern.compile(
      "loss\\b\\s*[:=]?\\s*([-+]?(?:\\d+\\.?\\d*|\\.\\d+)(?:[eE][-+]?\\d+)?)", Pattern.CASE_INSENSITIVE);

  static LogPage of(String jobId, String backend, String text, int offset, int limit) {
    List<String> all = text.isEmpty() ? List.of() : List.of(text.split("\r?\n", -1));
    // A log that ends with a newline has no empty last line.
    if (!all.isEmpty() && all.get(all.size() - 1).isEmpty()) all = all.subList(0, all.size() - 1);
    int from = Math.min(offset, all.size());
    int to = Math.min(all.size(), from + limit);
    List<String> lines = List.copyOf(all.subList(from, to));
    List<StepLoss> points = new ArrayList<>();
    for (String line : lines) parse(line, points);
    return new LogPage(jobId, backend, offset, limit, all.size(), to, lines, List.copyOf(points), null);
  }

  static LogPage empty(String jobId, String backend, int offset, int limit, String note) {
    return new LogPage(jobId, backend, offset, limit, 0, offset, List.of(), List.of(), note);
  }

  static void parse(String line, List<StepLoss> into) {
    Matcher step = STEP.matcher(line);
    if (!step.find()) return;
    Matcher loss = LOSS.matcher(line);
    if (!loss.find(step.end())) return;
    try {
      double value = Double.parseDouble(loss.group(1));
      if (Double.isFinite(value)) into.add(new StepLoss(Long.parseLong(step.group(1)), value));
    } catch (NumberFormatException e) {
      // A step number too long for a long is not a step: skip the line.
    }
  }

  /** Parses a non-negative integer query parameter, naming it and the range when it is not one. */
  static int param(String name, java.util.Optional<String> value, int fallback, int max) {
    if (value.isEmpty()) return fallback;
    String v = QueryParams.spacesTrimmed(value.get()).toLowerCase(Locale.ROOT);
    try {
      long n = QueryParams.integer(v);
      if (n >= 0 && n <= max) return (int) n;
    } catch (NumberFormatException e) {
      // fall through to the error below
    }
    // what was sent is not repeated: query text may be anything (a phone number as likely as a typo)
    throw BadRequest.invalid(name + " must be an integer from 0 to " + max);
  }
}
