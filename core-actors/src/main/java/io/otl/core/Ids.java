package io.otl.core;

import java.util.regex.Pattern;

/** The identifier rules of design §3.1, shared by the entities and every edge that accepts ids. */
public final class Ids {
  private static final Pattern ID = Pattern.compile("[A-Za-z0-9._:-]+");
  // A model version may also carry '+' (semantic-version build metadata, e.g. 1.2.0+lora).
  private static final Pattern VERSION = Pattern.compile("[A-Za-z0-9._:+-]+");
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
    if (id == null || id.isEmpty()) return field + " is required (1-" + max + " characters of [A-Za-z0-9._:-])";
    if (id.length() > max) return field + " is " + id.length() + " characters long; at most " + max + " are allowed";
    if (!ID.matcher(id).matches()) return field + " may contain only the characters [A-Za-z0-9._:-]";
    if (DOTS.matcher(id).matches()) return field + " must not consist of dots only (it names files and paths)";
    String pii = io.otl.core.session.PiiRules.looksLike(id);
    // Ids are stored, logged and put in URLs as they are: one that is PII would leak it everywhere.
    // The message never repeats the value.
    if (pii != null) return field + " looks like " + pii + "; use an opaque id";
    return null;
  }

  /** Why {@code version} is not a valid model version id, or null when it is: one rule for the API and the entity. */
  public static String versionProblem(String field, String version) {
    if (version == null || version.isEmpty()) {
      return field + " is required (1-" + MAX_VERSION + " characters of [A-Za-z0-9._:+-])";
    }
    if (version.length() > MAX_VERSION) {
      return field + " is " + version.length() + " characters long; at most " + MAX_VERSION + " are allowed";
    }
    if (!VERSION.matcher(version).matches()) return field + " may contain only the characters [A-Za-z0-9._:+-]";
    if (DOTS.matcher(version).matches()) return field + " must not consist of dots only (it names files and paths)";
    String pii = io.otl.core.session.PiiRules.looksLike(version);
    if (pii != null) return field + " looks like " + pii + "; use an opaque id";
    return null;
  }

  private static boolean isValid(String id, int max) {
    return id != null && !id.isEmpty() && id.length() <= max && ID.matcher(id).matches()
        && !DOTS.matcher(id).matches() && io.otl.core.session.PiiRules.looksLike(id) == null;
  }
}
