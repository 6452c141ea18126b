package io.otl.core.session;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Replaces personal data with typed placeholders before anything reaches the journal (design §3.1).
 * Secrets go first (a key's random body may hold a phone-shaped digit run, and a key cut in two
 * by "[PHONE]" would leave both halves raw), then ID numbers before bank cards and phone numbers
 * so that the digits of an ID are never half-taken for something else.
 */
public final class Desensitizer {

  /** A named rule: what it finds and what it leaves in its place. */
  public record Rule(String name, Pattern pattern, String placeholder, Check check) {
    /** A rule whose every match is a finding (e-mail, custom). */
    public Rule(String name, Pattern pattern, String placeholder) {
      this(name, pattern, placeholder, null);
    }

    /**
     * Whether the pattern can match {@code text} (already folded) at all: a cheap test that lets the
     * regex, the hottest code of ingestion (benchmarks/BENCHMARKS.md), skip texts it cannot match. An
     * e-mail needs an '@' (or "%40"); a phone number at least 7 digits (E.164: + and 7-15 digits; a
     * mainland mobile: 11; a national number written with separators: 10); an ID number 15. Custom
     * patterns always run.
     */
    boolean mayMatch(PiiRules.Scan scan) {
      // By the pattern's identity rather than a switch on the name: runs for every rule on every text.
      if (pattern == PiiRules.EMAIL) return scan.mayHoldEmail();
      if (pattern == PiiRules.OBFUSCATED_EMAIL) return scan.bracketedAt();
      if (pattern == PiiRules.PHONE) return scan.digits() >= 7;
      if (pattern == PiiRules.NATIONAL_PHONE) return scan.digits() >= 10;
      if (pattern == PiiRules.ID_CARD) return scan.digits() >= 15;
      if (pattern == PiiRules.BANK_CARD) return scan.digits() >= 13;
      // The IBAN with the fewest digits (NL: a 4-letter bank code and 10 digits) has 12.
      if (pattern == PiiRules.IBAN) return scan.digits() >= 10;
      if (pattern == PiiRules.SECRET) return scan.secretHint();
      return true;
    }

    /** The span {@code {from, to}} of the first finding at or after {@code from}, or null. */
    int[] find(Matcher m, String text, int from) {
      try {
        while (from <= text.length() && next(m, text, from)) {
          if (check == null) return new int[] {m.start(), m.end()};
          int[] hit = check.find(text, m.start(), m.end());
          if (hit != null && hit[0] != PiiRules.RESUME) return hit;
          from = hit != null ? hit[1] : m.end() > m.start() ? m.end() : m.end() + 1;
        }
        return null;
      } catch (StackOverflowError e) {
        // Java's regex recurses once per repetition of a group, so a long text can overflow the stack
        // (a custom pattern such as (a|b)+, or a built-in one before trial t66), and Pekko takes the
        // error for fatal: one message stopped the node's JVM. What this rule could not scan, from where
        // its search began to the end of the text, is taken for a finding: stored as its placeholder,
        // never raw, and no crash.
        StackOverflows.seen(name, text.length() - from);
        return from < text.length() ? new int[] {from, text.length()} : null;
      }
    }

    /**
     * The first finding at or after {@code from}, the end of a finding of this rule that {@code m} last
     * matched. A card candidate is a whole run of digit groups, and the pattern found again from the next
     * group would be the same run's rest with the same end: the check reads that rest at once. Matching
     * it again cost the rest of the run per card found, so a pasted table of 3,000 cards (65,000
     * characters) took seconds, quadratic in its length, and its request a 503 (trial t105).
     */
    int[] findAfter(Matcher m, String text, int from) {
      if (pattern == PiiRules.BANK_CARD && from > m.start() && from + 1 < m.end()) {
        int[] hit = check.find(text, from + 1, m.end());
        if (hit != null) return hit;
        from = m.end();
      }
      return find(m, text, from);
    }

    /**
     * The next match at or after {@code from}. The e-mail pattern's local part starts only where its
     * run of characters starts (linear time, trial t66), so after a finding it searches a region
     * starting there: seen whole, an address glued to the one before ("jo@example.com%20al@corp.com")
     * had no start left and was stored raw (review t70). The other rules keep their look-behinds
     * across the previous finding, as before.
     */
    private boolean next(Matcher m, String text, int from) {
      if (pattern == PiiRules.OBFUSCATED_EMAIL) return nextObfuscatedEmail(m, text, from);
      if (from == 0 || pattern != PiiRules.EMAIL) return m.find(from);
      m.reset();
      m.region(from, text.length());
      return m.find();
    }
  }

  /**
   * The next match of {@link PiiRules#OBFUSCATED_EMAIL}, tried only where a candidate's local part starts
   * (before an '@' or a bracketed "at"): searched from every position, the pattern cost 50 µs on a
   * 1,000-character text holding "(at)" anywhere, ten times the rest of the rules.
   */
  private static boolean nextObfuscatedEmail(Matcher m, String text, int from) {
    for (int at = PiiRules.nextAt(text, from); at >= 0; at = PiiRules.nextAt(text, at + 1)) {
      m.reset();
      m.region(PiiRules.localPartStart(text, from, at), text.length());
      if (m.lookingAt()) return true;
    }
    return false;
  }

  /**
   * What decides whether a match of a rule's pattern is a finding: a regular expression cannot
   * check a card's Luhn digit or an IBAN's mod 97, so those patterns only propose candidates.
   */
  @FunctionalInterface
  public interface Check {
    /**
     * The part of the candidate {@code text[start, end)} to replace, as {@code {from, to}}, or null; or
     * {@code {PiiRules.RESUME, from}}: none, and the search goes on from {@code from} inside the candidate.
     */
    int[] find(CharSequence text, int start, int end);
  }

  static final Pattern ID_CARD = PiiRules.ID_CARD;
  static final Pattern PHONE = PiiRules.PHONE;
  static final Pattern EMAIL = PiiRules.EMAIL;

  public static final String PHONE_PLACEHOLDER = "[PHONE]";
  public static final String ID_CARD_PLACEHOLDER = "[ID_CARD]";
  public static final String EMAIL_PLACEHOLDER = "[EMAIL]";
  public static final String BANK_CARD_PLACEHOLDER = "[BANK_CARD]";
  public static final String IBAN_PLACEHOLDER = "[IBAN]";
  public static final String SECRET_PLACEHOLDER = "[SECRET]";
  public static final String CUSTOM_PLACEHOLDER = "[REDACTED]";

  /** The names {@code desensitize.patterns} may list: design §8's three, then the three added to the default. */
  public static final List<String> BUILT_IN =
      List.of("phone", "id_card", "email", "bank_card", "iban", "secret");

  private static final Desensitizer BUILT_IN_ALL = new Desensitizer(true, BUILT_IN, List.of());

  private final boolean enabled;
  private final List<Rule> rules;
  private final boolean secretRule;
  /** Every built-in rule and nothing else: replaces exactly what {@link #builtInScanner} does. */
  private final boolean builtInAll;

  public Desensitizer(boolean enabled, List<String> patterns, List<String> customRegexes) {
    this.enabled = enabled;
    List<Rule> r = new ArrayList<>();
    // Order matters: secrets first (see the class comment), ID numbers before cards (a Gansu ID
    // starts with 62 like UnionPay), cards and IBANs before e-mails and phones (which could take a
    // card's last digits), e-mails (which may hold digits) before phones.
    if (patterns.contains("secret")) r.add(new Rule("secret", PiiRules.SECRET, SECRET_PLACEHOLDER, PiiRules::secret));
    if (patterns.contains("id_card")) {
      r.add(new Rule("id_card", ID_CARD, ID_CARD_PLACEHOLDER, PiiRules::outsideHexToken));
    }
    if (patterns.contains("bank_card")) {
      r.add(new Rule("bank_card", PiiRules.BANK_CARD, BANK_CARD_PLACEHOLDER, PaymentNumbers::bankCard));
    }
    if (patterns.contains("iban")) r.add(new Rule("iban", PiiRules.IBAN, IBAN_PLACEHOLDER, PaymentNumbers::iban));
    if (patterns.contains("email")) {
      r.add(new Rule("email", EMAIL, EMAIL_PLACEHOLDER));
      r.add(new Rule("email", PiiRules.OBFUSCATED_EMAIL, EMAIL_PLACEHOLDER, PiiRules::endsInTopLevelLabel));
    }
    if (patterns.contains("phone")) {
      r.add(new Rule("phone", PHONE, PHONE_PLACEHOLDER, PiiRules::outsideHexToken));
      r.add(new Rule("phone", PiiRules.NATIONAL_PHONE, PHONE_PLACEHOLDER, PiiRules::outsideHexToken));
    }
    for (String p : patterns) {
      if (!BUILT_IN.contains(p)) {
        throw new IllegalArgumentException(
            "desensitize.patterns contains '" + p + "'; allowed: " + String.join(", ", BUILT_IN));
      }
    }
    for (String regex : customRegexes) r.add(new Rule("custom", Pattern.compile(regex), CUSTOM_PLACEHOLDER));
    this.rules = List.copyOf(r);
    this.secretRule = patterns.contains("secret");
    this.builtInAll = enabled && customRegexes.isEmpty() && patterns.containsAll(BUILT_IN);
  }

  /** True when this replaces exactly what {@link #builtInScanner} replaces (the default configuration). */
  public boolean isBuiltInScanner() {
    return builtInAll;
  }

  /**
   * Refuses a value that holds personal data where it would be journaled as sent (a policy value, a
   * model version's artifact or endpoint): raw PII never reaches the journal (design §3.1). Refused
   * rather than replaced, since a placeholder in a name or path would point at something nobody
   * gave. The message names the field and the kinds found, never the value.
   *
   * @param field the field as the client names it
   * @param text the value sent; null passes
   * @param names what the field names instead, for the message ("a policy value names a model, …")
   * @throws IllegalArgumentException when a built-in rule finds something
   */
  public static void refusePersonalData(String field, String text, String names) {
    List<String> found = BUILT_IN_ALL.findings(text);
    if (!found.isEmpty()) {
      throw new IllegalArgumentException(field + ": looks like personal data (" + String.join(", ", found) + "); "
          + names);
    }
  }

  /** All built-in rules, whatever the configuration says: the final scan before training. */
  public static Desensitizer builtInScanner() {
    return BUILT_IN_ALL;
  }

  public boolean enabled() {
    return enabled;
  }

  /**
   * The text with every match replaced. Matching runs on the folded text ({@link PiiRules.Scan#match}:
   * NFKC, then look-alike spaces, dashes, digits and full stops as ASCII); a text with no match comes
   * back unchanged, one with a match comes back NFKC-folded with its placeholders, its look-alikes
   * outside the findings as sent.
   */
  public String apply(String text) {
    if (!enabled || text == null || text.isEmpty()) return text;
    // One scan for every rule's pre-check: a replacement only removes digits, '@' and '%', so a rule
    // the scan rules out stays ruled out after an earlier rule replaced something.
    PiiRules.Scan scan = PiiRules.scan(text);
    String out = scan.text();
    // What the patterns see: out with its look-alikes folded one for one, so spans are shared.
    String seen = scan.match();
    boolean hit = false;
    for (Rule rule : rules) {
      if (!rule.mayMatch(scan)) continue;
      Matcher m = rule.pattern().matcher(seen);
      int[] span = rule.find(m, seen, 0);
      if (span == null) continue;
      StringBuilder b = new StringBuilder(out.length());
      StringBuilder s = new StringBuilder(seen.length());
      int last = 0;
      do {
        b.append(out, last, span[0]).append(rule.placeholder());
        s.append(seen, last, span[0]).append(rule.placeholder());
        last = span[1];
        // An empty match (a custom pattern may have one) moves on by a character.
        span = rule.findAfter(m, seen, span[1] > span[0] ? span[1] : span[1] + 1);
      } while (span != null);
      out = b.append(out, last, out.length()).toString();
      seen = s.append(seen, last, seen.length()).toString();
      hit = true;
    }
    return hit ? out : text;
  }

  /**
   * An identifier the client chose for a message or tool call: desensitized like text, except a
   * canonical UUID, which is opaque (see {@link PiiRules#looksLike}) and must stay intact to match.
   */
  public String applyToId(String id) {
    if (id == null || PiiRules.isUuid(id)) return id;
    return apply(id);
  }

  /**
   * Every string value in the tree desensitized, keys too (tools sometimes key by e-mail), and every
   * integer of 7 digits or more ({@code "num": 13812345678} becomes the string "[PHONE]"), also when
   * it is written as a float ({@code 13812345678.0}, {@code 1.3812345678e10}: what a pandas column of
   * phone numbers with a gap in it serializes to). Two keys
   * that desensitize alike stay apart: {@code [EMAIL]}, {@code [EMAIL]#2}.
   */
  public JsonNode apply(JsonNode node) {
    return apply(node, true);
  }

  /**
   * As {@link #apply(JsonNode)}, every number left as it is: what a dataset export rewrites in a line it
   * writes, where a number turned into the string "[PHONE]" would break the line's own {@code tools} schema
   * (an {@code integer} parameter holding a string).
   */
  public JsonNode applyToStrings(JsonNode node) {
    return apply(node, false);
  }

  private JsonNode apply(JsonNode node, boolean numbers) {
    if (!enabled || node == null) return node;
    if (node.isTextual()) return TextNode.valueOf(apply(node.textValue()));
    if (node.isNumber() && !numbers) return node;
    if (node.isIntegralNumber()) return applyToNumber(node, node.asText());
    if (node.isFloatingPointNumber()) return applyToFloat(node);
    if (node.isArray()) {
      ArrayNode copy = JsonNodeFactory.instance.arrayNode(node.size());
      node.forEach(child -> copy.add(apply(child, numbers)));
      return copy;
    }
    if (node.isObject()) {
      ObjectNode copy = JsonNodeFactory.instance.objectNode();
      Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> f = fields.next();
        JsonNode v = f.getValue();
        copy.set(distinctKey(apply(f.getKey()), copy::has),
            v.isTextual() ? TextNode.valueOf(applyUnder(f.getKey(), v.textValue())) : apply(v, numbers));
      }
      return copy;
    }
    return node;
  }

  private JsonNode applyToNumber(JsonNode node, String digits) {
    if (digits.length() < 7) return node;
    String out = apply(digits);
    return out.equals(digits) ? node : TextNode.valueOf(out);
  }

  /**
   * A float without a fraction is scanned as the integer it holds: its text ("1.3812345678E10") splits
   * the digits, so the rules would not see the phone number in it, and neither would the export's
   * final scan. A float with a fraction is a measurement and stays.
   */
  private JsonNode applyToFloat(JsonNode node) {
    if (!Double.isFinite(node.doubleValue())) return node;
    String digits = wholeDigits(node.decimalValue());
    return digits == null ? node : applyToNumber(node, digits);
  }

  /**
   * The digits of a whole number, null for a number with a fraction (a measurement) or of more than
   * 40 digits (no PII rule applies; the bound keeps 1E999 from building a long string).
   */
  private static String wholeDigits(java.math.BigDecimal number) {
    java.math.BigDecimal value = number.stripTrailingZeros();
    if (value.scale() > 0 || value.precision() - value.scale() > 40) return null;
    return value.toBigInteger().toString();
  }

  /**
   * {@code value} desensitized, its leading credential replaced when {@code key} names one
   * ({@code {"password": "Summer2024!"}}): the text rule sees {@code password=…} in one string, a
   * JSON object or a metadata map hands its key and value over apart.
   */
  private String applyUnder(String key, String value) {
    if (secretRule && key != null && value != null && key.regionMatches(true, key.length() - 13, "authorization", 0, 13)) {
      // {"Authorization": "Basic …"}: the header's rule needs its name, as the export's final scan sees it
      String named = apply("Authorization: " + value);
      if (named.startsWith("Authorization: ")) return named.substring("Authorization: ".length());
    }
    int end = secretRule ? PiiRules.credentialEnd(key, value) : -1;
    return end < 0 ? apply(value) : SECRET_PLACEHOLDER + apply(value.substring(end));
  }

  /** {@code key}, or {@code key#2}, {@code key#3}… when a key of that name is already taken. */
  private static String distinctKey(String key, java.util.function.Predicate<String> taken) {
    if (!taken.test(key)) return key;
    for (int n = 2; ; n++) {
      String k = key + "#" + n;
      if (!taken.test(k)) return k;
    }
  }

  /** Keys and values desensitized; keys that desensitize alike stay apart as in {@link #apply(JsonNode)}. */
  public Map<String, String> apply(Map<String, String> map) {
    if (!enabled || map == null) return map;
    Map<String, String> copy = new LinkedHashMap<>();
    map.forEach((k, v) -> copy.put(distinctKey(apply(k), copy::containsKey),
        applyUnder(k, v)));
    return copy;
  }

  /**
   * The names of the rules that find something in {@code text}; empty when it is clean. A whole number
   * written with an exponent ({@code 1.3812345678E10}) is also scanned as its digits: journals of
   * builds before floats were desensitized hold tool input in that form (Jackson's text of the double
   * 13812345678.0), and the export's final scan is what stands between such a row and a dataset.
   */
  public List<String> findings(String text) {
    List<String> found = new ArrayList<>();
    if (text == null) return found;
    collect(text, found);
    String expanded = integralExponentsAsDigits(text);
    if (expanded != null) collect(expanded, found);
    return found;
  }

  private void collect(String text, List<String> found) {
    PiiRules.Scan f = PiiRules.scan(text);
    for (Rule rule : rules) {
      if (!found.contains(rule.name()) && rule.mayMatch(f)
          && rule.find(rule.pattern().matcher(f.match()), f.match(), 0) != null) {
        found.add(rule.name());
      }
    }
  }

  private static final Pattern EXPONENT_NUMBER = Pattern.compile("(?<![\\w.])\\d+(?:\\.\\d+)?[eE][+]?\\d{1,3}(?![\\w.])");

  /** {@code text} with each whole number in exponent form as its digits; null when it has none. */
  private static String integralExponentsAsDigits(String text) {
    if (text.indexOf('e') < 0 && text.indexOf('E') < 0) return null;
    Matcher m = EXPONENT_NUMBER.matcher(text);
    StringBuilder out = null;
    int last = 0;
    while (m.find()) {
      String digits;
      try {
        digits = wholeDigits(new java.math.BigDecimal(m.group()));
      } catch (NumberFormatException e) {
        continue;
      }
      if (digits == null) continue;
      if (out == null) out = new StringBuilder(text.length() + 16);
      out.append(text, last, m.start()).append(digits);
      last = m.end();
    }
    return out == null ? null : out.append(text, last, text.length()).toString();
  }
}
