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
 * Replaces personal data with typed placeholders before anything reaches the journal (DESIGN §3.1).
 * ID numbers are replaced before phone numbers so that the digits of an ID are never half-taken
 * for a phone number.
 */
public final class Desensitizer {

  /** A named rule: what it finds and what it leaves in its place. */
  public record Rule(String name, Pattern pattern, String placeholder) {
    /**
     * Whether the pattern can match {@code text} at all: a cheap test that lets the regex, the
     * hottest code of ingestion (benchmarks/BENCHMARKS.md), skip texts it cannot match. An e-mail
     * needs an '@'; a phone number at least 7 digits (E.164: + and 7-15 digits; a mainland mobile:
     * 11); an ID number 15. Custom patterns always run.
     */
    boolean mayMatch(String text) {
      return switch (name) {
        case "email" -> text.indexOf('@') >= 0;
        case "phone" -> hasDigits(text, 7);
        case "id_card" -> hasDigits(text, 15);
        default -> true;
      };
    }

    private static boolean hasDigits(String text, int atLeast) {
      int n = 0;
      for (int i = 0, len = text.length(); i < len; i++) {
        char c = text.charAt(i);
        if (c >= '0' && c <= '9' && ++n >= atLeast) return true;
      }
      return false;
    }
  }

  /** Mainland China resident ID: 18 characters (last may be X) or the old 15-digit form. */
  static final Pattern ID_CARD = Pattern.compile(
      "(?<![0-9A-Za-z])(?:[1-9]\\d{5}(?:18|19|20)\\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\\d|3[01])\\d{3}[0-9Xx]"
          + "|[1-9]\\d{7}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\\d|3[01])\\d{3})(?![0-9A-Za-z])");
  /** E.164 (+ and up to 15 digits, separators allowed) and mainland China mobiles (+86 optional). */
  static final Pattern PHONE = Pattern.compile(
      "(?<![\\w+])(?:\\+[1-9](?:[ .-]?\\d){6,14}|(?:(?:\\+|00)?86[ -]?)?1[3-9]\\d(?:[ -]?\\d{4}){2})(?!\\d)");
  static final Pattern EMAIL = Pattern.compile(
      "[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*\\.[A-Za-z]{2,}");

  public static final String PHONE_PLACEHOLDER = "[PHONE]";
  public static final String ID_CARD_PLACEHOLDER = "[ID_CARD]";
  public static final String EMAIL_PLACEHOLDER = "[EMAIL]";
  public static final String CUSTOM_PLACEHOLDER = "[REDACTED]";

  private static final Desensitizer BUILT_IN_ALL =
      new Desensitizer(true, List.of("id_card", "phone", "email"), List.of());

  private final boolean enabled;
  private final List<Rule> rules;

  public Desensitizer(boolean enabled, List<String> patterns, List<String> customRegexes) {
    this.enabled = enabled;
    List<Rule> r = new ArrayList<>();
    // Order matters: ID numbers first, then e-mails (which may hold digits), then phones.
    if (patterns.contains("id_card")) r.add(new Rule("id_card", ID_CARD, ID_CARD_PLACEHOLDER));
    if (patterns.contains("email")) r.add(new Rule("email", EMAIL, EMAIL_PLACEHOLDER));
    if (patterns.contains("phone")) r.add(new Rule("phone", PHONE, PHONE_PLACEHOLDER));
    for (String p : patterns) {
      if (!List.of("id_card", "email", "phone").contains(p)) {
        throw new IllegalArgumentException(
            "desensitize.patterns contains '" + p + "'; allowed: phone, id_card, email");
      }
    }
    for (String regex : customRegexes) r.add(new Rule("custom", Pattern.compile(regex), CUSTOM_PLACEHOLDER));
    this.rules = List.copyOf(r);
  }

  /** All built-in rules, whatever the configuration says: the final scan before training. */
  public static Desensitizer builtInScanner() {
    return BUILT_IN_ALL;
  }

  public boolean enabled() {
    return enabled;
  }

  public String apply(String text) {
    if (!enabled || text == null || text.isEmpty()) return text;
    String out = text;
    for (Rule rule : rules) {
      if (rule.mayMatch(out)) out = rule.pattern().matcher(out).replaceAll(Matcher.quoteReplacement(rule.placeholder()));
    }
    return out;
  }

  /** Every string value in the tree (keys too: tools sometimes key by e-mail) desensitized. */
  public JsonNode apply(JsonNode node) {
    if (!enabled || node == null) return node;
    if (node.isTextual()) return TextNode.valueOf(apply(node.textValue()));
    if (node.isArray()) {
      ArrayNode copy = JsonNodeFactory.instance.arrayNode(node.size());
      node.forEach(child -> copy.add(apply(child)));
      return copy;
    }
    if (node.isObject()) {
      ObjectNode copy = JsonNodeFactory.instance.objectNode();
      Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
      while (fields.hasNext()) {
        Map.Entry<String, JsonNode> f = fields.next();
        copy.set(apply(f.getKey()), apply(f.getValue()));
      }
      return copy;
    }
    return node;
  }

  public Map<String, String> apply(Map<String, String> map) {
    if (!enabled || map == null) return map;
    Map<String, String> copy = new LinkedHashMap<>();
    map.forEach((k, v) -> copy.put(k, apply(v)));
    return copy;
  }

  /** The names of the rules that find something in {@code text}; empty when it is clean. */
  public List<String> findings(String text) {
    List<String> found = new ArrayList<>();
    if (text == null) return found;
    for (Rule rule : rules) if (rule.mayMatch(text) && rule.pattern().matcher(text).find()) found.add(rule.name());
    return found;
  }
}
