package io.otl.core;

import java.util.regex.Pattern;

/** The identifier rules of design §3.1, shared by the entities and every edge that accepts ids. */
public final class Ids {
  /** The characters of a session, agent, job, event or feedback id (design §3.1). */
  public static final String ID_CHARSET = "[A-Za-z0-9._:-]";
  // A model version may also carry '+' (semantic-version build metadata, e.g. 1.2.0+lora).
  private static final String VERSION_CHARSET = "[A-Za-z0-9._:+-]";
  private static final Pattern ID = Pattern.compile(ID_CHARSET + "+");
  private static final Pattern VERSION = Pattern.compile(VERSION_CHARSET + "+");
  private static final Pattern NOT_ID = Pattern.compile("[^" + ID_CHARSET.substring(1));
  private static final Pattern DOTS = Pattern.compile("\\.+");

  private Ids() {}

  public static final int MAX_SESSION_ID = 128;
  public static final int MAX_AGENT_ID = 64;
  public static final int MAX_VERSION = 128;

  public static boolean isValidSessionId(String id) {
    return isValid(id, MAX_SESSION_ID);
  }

  public static boolean isValidAgentId(String id) {
    return isValid(id, MAX_AGENT_ID);
  }

  /** Why {@code id} is not a valid id of at most {@code max} characters, or null when it is. */
  public static String problem(String field, String id, int max) {
    return problem(field, id, max, ID, ID_CHARSET);
  }

  /** Why {@code version} is not a valid model version id, or null when it is: one rule for the API and the entity. */
  public static String versionProblem(String field, String version) {
    return problem(field, version, MAX_VERSION, VERSION, VERSION_CHARSET);
  }

  private static String problem(String field, String id, int max, Pattern allowed, String charset) {
    if (id == null || id.isEmpty()) return field + " is required (1-" + max + " characters of " + charset + ")";
    if (id.length() > max) return field + " is " + id.length() + " characters long; at most " + max + " are allowed";
    if (!allowed.matcher(id).matches()) return field + " may contain only the characters " + charset;
    if (DOTS.matcher(id).matches()) return field + " must not consist of dots only (it names files and paths)";
    String pii = io.otl.core.session.PiiRules.looksLike(id);
    // Ids are stored, logged and put in URLs as they are: one that is PII would leak it everywhere.
    // The message never repeats the value.
    if (pii != null) return field + " looks like " + pii + "; use an opaque id";
    return null;
  }

  /** {@code text} with every character an id may not hold replaced by {@code replacement}. */
  public static String replaceNonIdChars(String text, String replacement) {
    return NOT_ID.matcher(text).replaceAll(replacement);
  }

  private static boolean isValid(String id, int max) {
    return problem("id", id, max) == null;
  }
}
