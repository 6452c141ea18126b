package io.otl.core;

import java.util.regex.Pattern;

/**
 * The identifier rules of design §3.1, shared by the entities and every edge that accepts ids.
 * The character rules are loops, not regexes: every recorded event's id goes through here
 * (benchmarks/BENCHMARKS.md, W1 profile).
 */
public final class Ids {
  /** The characters of a session, agent, job, event or feedback id (design §3.1). */
  public static final String ID_CHARSET = "[A-Za-z0-9._:-]";
  // A model version may also carry '+' (semantic-version build metadata, e.g. 1.2.0+lora).
  private static final String VERSION_CHARSET = "[A-Za-z0-9._:+-]";
  private static final Pattern NOT_ID = Pattern.compile("[^" + ID_CHARSET.substring(1));

  /** Keys shown in messages as sent; others (digits, e-mail signs …) as {@code *}, never echoed. */
  private static final Pattern PLAIN_KEY = Pattern.compile("[A-Za-z_-]{1,64}");

  private Ids() {}

  /**
   * A key as error messages may show it: as sent when it is a plain word, else {@code *}. A key
   * is client data (an e-mail, a phone number as a map key) and answers must not echo it.
   */
  public static String shownKey(String key) {
    return key != null && PLAIN_KEY.matcher(key).matches() ? key : "*";
  }

  /** A dotted key ({@code trigger.min-samples}) as messages may show it: whole when every part is a plain word, else {@code *}. */
  public static String shownPath(String key) {
    if (key == null || key.isEmpty()) return "*";
    for (String part : key.split("\\.", -1)) {
      if (!PLAIN_KEY.matcher(part).matches()) return "*";
    }
    return key;
  }

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
    return problem(field, id, max, false, ID_CHARSET);
  }

  /** Why {@code version} is not a valid model version id, or null when it is: one rule for the API and the entity. */
  public static String versionProblem(String field, String version) {
    return problem(field, version, MAX_VERSION, true, VERSION_CHARSET);
  }

  private static String problem(String field, String id, int max, boolean plusAllowed, String charset) {
    if (id == null || id.isEmpty()) return field + " is required (1-" + max + " characters of " + charset + ")";
    if (id.length() > max) return field + " is " + id.length() + " characters long; at most " + max + " are allowed";
    boolean dotsOnly = true;
    for (int i = 0, n = id.length(); i < n; i++) {
      char c = id.charAt(i);
      if (!allowed(c, plusAllowed)) return field + " may contain only the characters " + charset;
      dotsOnly &= c == '.';
    }
    if (dotsOnly) return field + " must not consist of dots only (it names files and paths)";
    String pii = io.otl.core.session.PiiRules.looksLike(id);
    // Ids are stored, logged and put in URLs as they are: one that is PII would leak it everywhere.
    // The message never repeats the value.
    if (pii != null) return field + " looks like " + pii + "; use an opaque id";
    return null;
  }

  /**
   * Why a NEW session or agent may not take {@code id}, or null: it holds a provider's API key
   * ({@link io.otl.core.session.PiiRules#keyInId}). Ids are logged, put in metric labels and journaled
   * as sent, and {@code X-Agent-Id: sk-proj-…} (the key in the wrong header) put the key in all three
   * (trial t159). Checked only where a session starts or an agent is first registered, never on an
   * id something already has: a journal written by an earlier build may hold such a session, whose
   * reads and appends keep working. The message never repeats the id.
   */
  public static String keyProblem(String field, String id) {
    if (!io.otl.core.session.PiiRules.keyInId(id)) return null;
    return field + " looks like an API key; a key belongs in the Authorization header or the configuration, "
        + "never in an id (ids are logged and stored as sent): use an opaque id";
  }

  /**
   * {@code id} as logs and metric labels may show it: as it is, or, when it holds an API key (an id an
   * earlier build stored), a fixed mark and a short digest that tells such ids apart without the key.
   */
  public static String shown(String id) {
    if (!io.otl.core.session.PiiRules.keyInId(id)) return id;
    return "key-like-id-" + Sha256.hex(id).substring(0, 10);
  }

  /**
   * True when {@code text} holds a control character (newline, tab, NUL, DEL, C1) or a Unicode line
   * or paragraph separator: what a model name must not hold, since it goes into upstream requests,
   * headers and log lines as written (a newline there starts a forged line or header).
   */
  public static boolean hasControlCharacter(String text) {
    return text != null && text.codePoints().anyMatch(c -> Character.isISOControl(c) || c == 0x2028 || c == 0x2029);
  }

  /**
   * The agent id a display name stands for (an AgentScope agent's or an OpenTelemetry span's
   * {@code gen_ai.agent.name}): every character an id may not hold becomes '-' and the result is cut
   * at {@link #MAX_AGENT_ID}, so "Weather Agent" is "Weather-Agent"; null when even that is no valid id,
   * or when the name itself holds personal data (see {@link #namePii}).
   */
  public static String agentIdFromName(String name) {
    if (name == null || namePii(name) != null) return null;
    String id = idOfName(name);
    if (id.length() > MAX_AGENT_ID) id = id.substring(0, MAX_AGENT_ID);
    return isValidAgentId(id) ? id : null;
  }

  /**
   * What personal data a display name holds ("an e-mail address", …), or null. Checked on the name as
   * sent: the id made of it loses the '@' and '+' ("Support jo@example.com" became
   * "Support-jo-example.com"), which the id check no longer takes for an e-mail, and that id was
   * journaled, logged and put in metric labels.
   */
  public static String namePii(String name) {
    if (name == null) return null;
    String pii = io.otl.core.session.PiiRules.looksLike(name);
    if (pii != null) return pii;
    // A key in a display name ("Agent sk-proj-…") made an id that was logged and journaled with the
    // key whole. Ids a client chooses are not checked for keys (data-hardening.md); a name is not an id.
    return io.otl.core.session.Desensitizer.builtInScanner().findings(name).contains("secret")
        ? "an API key or token" : null;
  }

  /**
   * The id a display name stands for, not yet cut to {@link #MAX_AGENT_ID}: an ASCII name with each
   * character an id may not hold as '-' ("Weather Agent" is "Weather-Agent"). A name with any other
   * character is the ASCII words it has (or "agent") and ten hex digits of its SHA-256: as dashes alone,
   * every four-character Chinese name (客服助手, 销售助手) was the agent "----", one agent of many whose
   * sessions were pooled, trained and served one model (trial t102).
   */
  public static String idOfName(String name) {
    String dashed = replaceNonIdChars(name, "-");
    boolean ascii = true;
    for (int i = 0; i < name.length() && ascii; i++) ascii = name.charAt(i) < 0x80;
    if (ascii) return dashed;
    // NFC: the same name typed with composed or combining accents is one agent.
    String normal = java.text.Normalizer.normalize(name, java.text.Normalizer.Form.NFC);
    String words = replaceNonIdChars(normal, "-").replaceAll("-{2,}", "-").replaceAll("^-|-$", "");
    try {
      byte[] d = java.security.MessageDigest.getInstance("SHA-256")
          .digest(normal.getBytes(java.nio.charset.StandardCharsets.UTF_8));
      // The words cut before the digest is added, so that the id's cut (MAX_AGENT_ID) never takes the
      // digest: two long names differing only in their non-ASCII part stay two agents.
      String head = words.isEmpty() ? "agent" : words.substring(0, Math.min(words.length(), MAX_AGENT_ID - 11));
      return head + "-" + java.util.HexFormat.of().formatHex(d, 0, 5);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }

  /** {@code text} with every character an id may not hold replaced by {@code replacement}. */
  public static String replaceNonIdChars(String text, String replacement) {
    return NOT_ID.matcher(text).replaceAll(replacement);
  }

  private static boolean allowed(char c, boolean plusAllowed) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
        || c == '.' || c == '_' || c == ':' || c == '-' || (plusAllowed && c == '+');
  }

  private static boolean isValid(String id, int max) {
    return problem("id", id, max) == null;
  }
}
