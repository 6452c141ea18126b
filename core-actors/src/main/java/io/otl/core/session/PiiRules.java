package io.otl.core.session;

import java.text.Normalizer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The built-in PII patterns and the text folding they run on (design §3.1), shared by the
 * {@link Desensitizer} and the id checks ({@link io.otl.core.Ids}).
 *
 * <p>Attackers and careless clients write PII in many shapes; the patterns accept separators
 * ({@code 138.6789.0123}, {@code +86 (139) 2345 6789}, {@code 110106 19900307 127X}), digit runs glued
 * to letters or {@code _} ({@code tel_13889012345}, {@code ID110107199003071288}: only a neighbouring
 * digit stops a match, because a digit run inside a longer one is not a number of its own), non-ASCII
 * e-mails and {@code %40}. Text is NFKC-normalised first, so full-width digits and {@code ＠} count.
 */
public final class PiiRules {
  private PiiRules() {}

  /** Mainland China resident ID: 18 characters (last may be X, groups may be spaced) or the old 15 digits. */
  public static final Pattern ID_CARD = Pattern.compile(
      "(?<!\\d)(?:[1-9]\\d{5}[ -]?(?:18|19|20)\\d{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\\d|3[01])[ -]?\\d{3}[0-9Xx]"
          + "|[1-9]\\d{7}(?:0[1-9]|1[0-2])(?:0[1-9]|[12]\\d|3[01])\\d{3})(?!\\d)");
  /** A canonical UUID inside a longer id, not glued to other letters or digits. */
  private static final Pattern EMBEDDED_UUID = Pattern.compile(
      "(?<![0-9A-Za-z])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![0-9A-Za-z])");
  /**
   * National numbers as people write them without a country code: North American 3-3-4 numbers
   * ({@code (415) 555-0199}, {@code 555-123-4567}, {@code 415.555.0199}, {@code 415 555 0199}, an
   * optional leading {@code 1-}) and mainland China landlines ({@code 010-12345678},
   * {@code 0755-1234567}). Separators are required, and the same twice in a 3-3-4 form: a bare
   * ten-digit run is as often an order number or a Unix time, and {@code 2024.12.0112} is no number
   * of anyone's. Part of the {@code phone} rule, not of the id check, which keeps {@link #PHONE}
   * alone so that ids accepted by earlier builds stay accepted.
   */
  public static final Pattern NATIONAL_PHONE = Pattern.compile(
      "(?<![\\d+])(?:(?:1[ .-]?)?\\(\\d{3}\\)[ .-]?\\d{3}[ .-]\\d{4}"
          + "|(?:1[ .-])?\\d{3}(?<sep>[ .-])\\d{3}\\k<sep>\\d{4}"
          + "|0\\d{2,3}-\\d{7,8})(?!\\d)");

  /**
   * E.164 (+ and 7-15 digits with separators or parentheses) and mainland China mobiles (+86 or 0086
   * optional, the 3-4-4 groups separated by nothing, spaces, dots or dashes, the first in parentheses).
   */
  public static final Pattern PHONE = Pattern.compile(
      "(?<![\\d+])(?:\\+[1-9](?:[ .()-]{0,3}\\d){6,14}"
          + "|(?:(?:\\+|00)?86[ .-]?)?\\(?1[3-9]\\d\\)?(?:[ .-]?\\d{4}){2})(?!\\d)");
  /** Letters of any script in the local part and the domain; {@code %40} is an encoded '@'. */
  // A URL-encoded address may encode its domain's dots too (%2E): encoders that escape every
  // non-alphanumeric do, and alice%40example%2Ecom was stored raw.
  public static final Pattern EMAIL = Pattern.compile(
      // a local part, or RFC 5322's quoted one ("jane doe"@…); a domain name, or an IP literal (root@[10.0.0.1])
      // An unquoted local part starts where its run of such characters starts: tried from every position
      // of a long run without '@' (a hex dump, a token), the search was quadratic, and one 24 KB message
      // holding an '@' anywhere kept its session busy past the request timeout (a 503; trial t66).
      "(?:\"[^\"\\r\\n@]{1,64}\"|(?<![\\p{L}\\p{N}._%+-])[\\p{L}\\p{N}._%+-]+)(?:@|%40)"
          + "(?:\\[(?:IPv6:[0-9A-Fa-f:.]{2,45}|\\d{1,3}(?:\\.\\d{1,3}){3})]"
          // at most 127 labels, as DNS allows: Java's regex recurses once per repetition of a group, and
          // "x@a.a.a.…" (a 64 KB message) overflowed the stack, a fatal error that stopped the node (trial t66)
          // The last label is ASCII letters, a punycode label (xn--fiqs8s, the IDN of 中国, which a label
          // of letters only cut after "xn", leaving "--fiqs8s" raw), or letters of another script: never
          // both, so Chinese glued to an address ("alice@example.com谢谢") stays text (trial t102).
          + "|[\\p{L}\\p{N}-]+(?:(?:\\.|%2[Ee])[\\p{L}\\p{N}-]+){0,126}(?:\\.|%2[Ee])"
          // A label mixing scripts (a Cyrillic 'о' in "cоm") is still a label, tried last.
          + "(?:[Xx][Nn]--[A-Za-z0-9-]*[A-Za-z0-9]|[A-Za-z]{2,}|[\\p{L}&&[^A-Za-z]]{2,}|\\p{L}{2,}))");

  /**
   * An e-mail address with its '@', and perhaps its dots, written as a word in brackets to fool harvesters:
   * {@code alice(at)example.com}, {@code alice [at] example [dot] com}, {@code alice@example[dot]com},
   * {@code bob{AT}corp.example.org}. ASCII only, the local part starting where its run starts (linear, as in
   * {@link #EMAIL}); a top-level label of letters after a dot is required, so "meet (at) noon" stays. The
   * words without brackets ("alice at example dot com") are not taken: nothing tells them from "look at
   * example dot com". Part of the {@code email} rule, not of the id check (trial t162).
   */
  public static final Pattern OBFUSCATED_EMAIL = Pattern.compile(
      // possessive throughout: nothing to backtrack into, and the labels are bounded as in EMAIL
      "(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]++(?: ?[(\\[{<] ?(?i:at|@) ?[)\\]}>] ?|@)"
          + "[A-Za-z0-9-]++(?:(?:\\.| ?[(\\[{<] ?(?i:dot) ?[)\\]}>] ?)[A-Za-z0-9-]++){1,126}+");

  /** Where the next '@' or bracketed "at" ("(at)", "[ AT ]", "[@]") at or after {@code from} starts, or -1. */
  static int nextAt(String t, int from) {
    for (int i = from, n = t.length(); i < n; i++) {
      char c = t.charAt(i);
      if (c == '@') return i;
      if (c != '(' && c != '[' && c != '{' && c != '<') continue;
      int w = i + 1 < n && t.charAt(i + 1) == ' ' ? i + 2 : i + 1;
      int e = w < n && t.charAt(w) == '@' ? w + 1 : w + 2 <= n && t.regionMatches(true, w, "at", 0, 2) ? w + 2 : -1;
      if (e < 0) continue;
      if (e < n && t.charAt(e) == ' ') e++;
      if (e < n && ")]}>".indexOf(t.charAt(e)) >= 0) return i;
    }
    return -1;
  }

  /** Where the local part before the '@' or "(at)" at {@code at} starts: the start of its run, not before {@code from}. */
  static int localPartStart(String t, int from, int at) {
    int i = at > from && t.charAt(at - 1) == ' ' ? at - 1 : at;
    while (i > from && (asciiAlnum(t.charAt(i - 1)) || "._%+-".indexOf(t.charAt(i - 1)) >= 0)) i--;
    return i;
  }

  /** Whether the {@link #OBFUSCATED_EMAIL} match {@code t[start, end)} ends in a top-level label of 2+ letters. */
  static int[] endsInTopLevelLabel(CharSequence t, int start, int end) {
    int letters = 0;
    for (int i = end - 1; i > start && asciiAlnum(t.charAt(i)) && t.charAt(i) > '9'; i--) letters++;
    int label = end - letters;
    return letters >= 2 && (label == start || !asciiAlnum(t.charAt(label - 1)) && t.charAt(label - 1) != '-')
        ? new int[] {start, end} : null;
  }

  /**
   * A candidate for a payment card number: digit groups joined by single spaces or dashes, not glued
   * to letters or digits. Unlike phone and ID numbers a card is not taken from inside a word: hex
   * hashes (an export's {@code prompt:<sha-256>}) and base64 hold letter-bounded digit runs that pass
   * prefix and Luhn checks about once in 2,500 hashes, and one false finding refuses a whole export.
   * The pattern only proposes; {@link PaymentNumbers#bankCard} decides (issuer prefix, length, Luhn).
   */
  public static final Pattern BANK_CARD = Pattern.compile(
      // possessive: Java's regex recurses once per repetition of a backtracking group, and "1 1 1 …" (40 KB
      // in one message) overflowed the stack, a fatal error that stopped the node's JVM (trial t66). A group
      // glued to a letter ("… 1111 3D-Secure") ends the candidate before it, as backtracking did (review t70).
      "(?<![0-9A-Za-z])\\d++(?:[ -]\\d++(?![A-Za-z]))*+(?![0-9A-Za-z])");
  /**
   * A candidate IBAN: an upper-case country code, two check digits and the upper-case account part,
   * bare or in groups of four separated by single spaces, not glued to letters or digits (base64 and
   * upper-case ids would otherwise offer one candidate in 97 that passes the checksum).
   * {@link PaymentNumbers#iban} decides (known country, length 15-34, check digits 02-98, mod 97).
   */
  public static final Pattern IBAN = Pattern.compile(
      "(?<![0-9A-Za-z])[A-Z]{2}\\d{2}(?: ?[0-9A-Z]{4}){2,7}(?: ?[0-9A-Z]{1,3})?(?![0-9A-Za-z])");
  /**
   * The names of settings whose value is always a credential, in the spellings configuration files,
   * environment variables and JSON use (AWS_SECRET_ACCESS_KEY, SecretAccessKey, db_password, apiKey).
   */
  // "…token" with a name before it (HF_TOKEN, GITHUB_TOKEN, OTL_AUTH_TOKEN, authToken, X-Auth-Token):
  // a bare "token" is a tokenizer's or a logprob's word, "max_tokens" a count.
  // Kebab case (secret-key, aws-secret-access-key: Spring Boot, HOCON, MinIO) as well as snake and camel
  // case: api-key and client-secret were taken, secret-key's value was stored raw (trial t159).
  // A name ending in PASS (DB_PASS, smtp_pass, smtp-pass, a bare PASS) and credential(s) were stored raw
  // (trial t162): "pass" counts only as a word of its own, after '_', '-' or nothing, so "bypass" and
  // "compass" are no names; its value must also not be a plain number (a test's "pass: 0.953125").
  // The names that may follow a word share one [a-z0-9]*: each such run is read to the word's end and
  // given back a character at a time, once per alternative that starts with one (the secret rule's cost).
  private static final String CREDENTIAL_NAME = "(?i:(?:aws[_-]?)?secret[_-]?access[_-]?key"
      + "|[a-z0-9]*_?(?:pass(?:word|wd|phrase)|secret(?:[_-]?key)?|credentials?)|api[_-]?key|[a-z0-9]+[_-]?token|pass)";
  private static final Pattern CREDENTIAL_KEY = Pattern.compile("(?<![A-Za-z0-9])" + CREDENTIAL_NAME);

  /**
   * Where the credential in {@code value} ends when a JSON key names a credential ({@code "password"},
   * {@code "aws_secret_access_key"}, {@code "db_password"}), or -1: the leading run of the value
   * without white space, quotes, '<', '>', ',' or ';', when it has 8 or more characters and holds a
   * digit. The tree walk replaces that run, as the text rule replaces it after {@code password=}
   * (and as the export's final scan, reading the JSON line, would find it).
   */
  public static int credentialEnd(String key, String value) {
    if (key == null || value == null || value.length() < 8 || !mayNameCredential(key)) return -1;
    Matcher m = CREDENTIAL_KEY.matcher(key);
    boolean named = false;
    while (!named && m.find()) named = m.end() == key.length();
    if (!named) return -1;
    int i = 0;
    while (i < value.length() && !Character.isWhitespace(value.charAt(i)) && "\"'<>,;".indexOf(value.charAt(i)) < 0) {
      i++;
    }
    return i >= 8 && holdsDigit(value, 0, i) && !(endsWithIgnoreCase(key, key.length(), "pass") && plainNumber(value, 0, i))
        ? i : -1;
  }

  /**
   * Whether {@code key} ends as every {@link #CREDENTIAL_NAME} ends ("…key", "…password", "…passwd",
   * "…passphrase", "…secret", "…credential(s)", "…token", "pass"), ignoring case: a match of {@link
   * #CREDENTIAL_KEY} that ends with the key needs it. Most keys of a tool's input and output name no
   * credential, and the pattern's matcher cost every field of every tree (session 47).
   */
  private static boolean mayNameCredential(String key) {
    int e = key.length();
    return endsWithIgnoreCase(key, e, "key") || endsWithIgnoreCase(key, e, "word") || endsWithIgnoreCase(key, e, "wd")
        || endsWithIgnoreCase(key, e, "phrase") || endsWithIgnoreCase(key, e, "secret")
        || endsWithIgnoreCase(key, e, "credential") || endsWithIgnoreCase(key, e, "credentials")
        || endsWithIgnoreCase(key, e, "token") || endsWithIgnoreCase(key, e, "pass");
  }

  /**
   * The keys of providers, by their prefix (the first part of {@link #SECRET}): what an id may not hold
   * either ({@link #keyInId}).
   */
  /** The longest credential value one match of {@link #SECRET} takes; {@link #secret} extends a longer one. */
  private static final int MAX_VALUE = 256;

  private static final String PROVIDER_KEYS = "sk-[A-Za-z0-9_-]{20,}"
          + "|[sr]k_(?:live|test)_[A-Za-z0-9]{20,}"
          + "|(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])"
          + "|gh[pousr]_[A-Za-z0-9]{36,}"
          + "|github_pat_[A-Za-z0-9_]{50,}"
          + "|xox[abposr]-[A-Za-z0-9-]{10,}|xapp-[A-Za-z0-9-]{10,}"
          + "|AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])"
          // Hugging Face access tokens (hf_ + 34): what pulls a base model or pushes a checkpoint
          + "|hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9])"
          // inference providers' keys (trial t87 found each journaled raw): Groq gsk_ + 52, Replicate
          // r8_ + 37, xAI xai- + 80, NVIDIA nvapi- + 64, GitLab glpat- + 20 (newer ones carry dotted parts)
          + "|gsk_[A-Za-z0-9]{40,}(?![A-Za-z0-9])|r8_[A-Za-z0-9]{30,}(?![A-Za-z0-9])"
          + "|xai-[A-Za-z0-9]{40,}(?![A-Za-z0-9])|nvapi-[A-Za-z0-9_-]{40,}"
          + "|glpat-[A-Za-z0-9_-]{20,}(?:\\.[A-Za-z0-9_-]{2,}){0,2}"
          + "|eyJ[A-Za-z0-9_-]{8,}\\.eyJ[A-Za-z0-9_-]{8,}\\.[A-Za-z0-9_-]*";

  /**
   * Credentials with a recognisable prefix: OpenAI/Anthropic/DeepSeek style {@code sk-…} keys, Stripe
   * {@code sk_live_}/{@code rk_live_}, Hugging Face {@code hf_…} tokens, Groq {@code gsk_}, Replicate
   * {@code r8_}, xAI {@code xai-}, NVIDIA {@code nvapi-} and GitLab {@code glpat-} keys, AWS access key ids,
   * GitHub tokens, Slack tokens, Google API keys, JWTs, an opaque token after "Bearer" (16+ characters holding a digit) and the
   * {@code user:password} of a URL ({@code postgres://app:pw@db}), and a PEM private key's header, whose block
   * {@link PemBlock} measures. The minimum lengths are those of real keys, so a short
   * {@code sk-} word ("task-based" is not even a candidate: the prefix must start a word) does not
   * count; {@link #secret} also wants an {@code sk-} key's body to look random.
   */
  public static final Pattern SECRET = Pattern.compile(
      "(?<![0-9A-Za-z])(?:" + PROVIDER_KEYS
          // an opaque bearer token (Authorization headers in tool output, curl -v): the token part
          + "|(?i:bearer)[ \\t]+[A-Za-z0-9_.~+/-]{16,}=*(?![A-Za-z0-9_.~+/=-])"
          // an Authorization header of the Basic or Token scheme (curl -v, an error text): the credential part
          + "|(?i:authorization)[\"']?[ \\t]*[:=][ \\t]*[\"']?(?i:basic|token)[ \\t]+[A-Za-z0-9_.~+/-]{8,}=*"
          + "(?![A-Za-z0-9_.~+/=-])"
          // the value of a credential's assignment (aws_secret_access_key = …, "password": "…")
          // (a '&' that starts the next parameter of a URL's query, "&name=", ends it, and a match is at most
          // MAX_VALUE long, {@link #secret} takes the rest: each parameter's match ran to the end of the text, so
          // a text of many "?pass=&" took seconds, quadratic; review t168)
          + "|" + CREDENTIAL_NAME + "[\"']?[ \\t]*[:=][ \\t]*[\"']?(?:[^\\s\"'<>,;&]|&(?![A-Za-z0-9_.~-]{1,64}=))"
          + "{8," + MAX_VALUE + "}+"
          // a token in a URL's query (?key=…, &sig=… of an Azure SAS, X-Amz-Signature): the value, URL-safe
          // characters only, so that a path (?key=reports/2024/jan.csv) is not one (trial t162)
          // 16 characters at least: a cache or file key (?key=user_12345, ?key=report2024.csv) is no token (review t166)
          + "|(?<=[?&])(?i:(?:x-(?:amz|goog)-)?signature|sig|key|token)=[A-Za-z0-9_.~+%=-]{16,}+"
          + "(?![^\\s&#\"'<>\\\\`{}|)\\]])"
          // an incoming webhook's URL, whose path is its credential (Slack, Discord; trial t162)
          + "|hooks\\.slack\\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/-]{8,}+"
          + "|discord(?:app)?\\.com/api/webhooks/\\d{5,}+/[A-Za-z0-9_-]{20,}+"
          // a URL's user:password (postgres://app:pw@db, redis://:pw@cache): the user-info part
          + "|[A-Za-z][A-Za-z0-9+.-]{0,31}://[^\\s/?#\"'<>\\\\`{}|@:]*:[^\\s/?\"'<>\\\\`{}|]+@(?=[A-Za-z0-9\\[]))"
          // a PEM private key's header (id_rsa, a TLS key, a service account's "private_key"; trial t159): the
          // block's extent is found by PemBlock, not by the pattern. Its own word, so also after an escaped
          // line break ("…\\n-----BEGIN", a JSON text inside a message).
          + "|" + PemBlock.HEADER);


  /**
   * The text the patterns see, and what the cheap pre-checks need, from one pass over it. NFKC
   * (full-width digits and '＠', circled or mathematical digits) runs only when the text holds a
   * character it could turn into something a pattern looks for; other non-ASCII text (CJK prose) is
   * matched as it is: the e-mail pattern's letter classes take any script.
   *
   * <p>{@code text} is what a replacement is made in (NFKC-folded or as sent); {@code match} is what
   * the patterns run on: {@code text} with the look-alikes NFKC leaves alone folded one character for
   * one (see {@link #lookAlike}), so a span found in {@code match} is the same span of {@code text}.
   * Digits of every script count in {@code digits}, so the pre-checks do not skip them.
   */
  public record Scan(String text, String match, int digits, boolean at, boolean percent, boolean secretHint,
      boolean bracketedAt) {
    boolean mayHoldEmail() {
      return at || (percent && match.contains("%40"));
    }
  }

  public static Scan scan(String text) {
    Scan scan = scan(text, false);
    if (scan.text() == text) return scan;
    // NFKC folds the whole text: a Chinese message typed with an IME's full-width digits
    // (电话：１３８…，谢谢！) was stored with all its punctuation as ASCII (电话:[PHONE],谢谢!). When the
    // full-width forms U+FF01-U+FF5E are all NFKC would change, they are folded one for one, for
    // matching only, as the look-alikes are, and the text outside the findings is stored as sent (trial t102).
    String oneForOne = fullWidthAsAscii(text);
    if (oneForOne == text || stillNeedsNfkc(oneForOne)) return scan;
    Scan folded = scan(oneForOne, false);
    if (folded.text() != oneForOne) return scan; // something else needed NFKC or hid characters
    return new Scan(text, folded.match(), folded.digits(), folded.at(), folded.percent(), folded.secretHint(),
        folded.bracketedAt());
  }

  /**
   * Whether a character outside the full-width forms folds, under NFKC, into something a pattern reads: an
   * ASCII letter or digit (Roman numeral Ⅹ as an ID number's check character, circled or mathematical
   * digits) or one of {@code @ . % + ( )} on its own (small and one-dot-leader stops, small parentheses).
   * Such a text keeps the NFKC scan, or those findings were lost with the fold (review of trial t102's
   * change). Everyday Chinese punctuation (… 、 。 「」) folds into none of them and keeps its own form.
   */
  private static boolean stillNeedsNfkc(String text) {
    for (int i = 0; i < text.length(); ) {
      int cp = text.codePointAt(i);
      i += Character.charCount(cp);
      if (cp < 0x80 || cp >= 0x3400 && cp < 0xA000) continue;
      String folded = Normalizer.normalize(new String(Character.toChars(cp)), Normalizer.Form.NFKC);
      if (folded.length() == 1 && "@.%+()".indexOf(folded.charAt(0)) >= 0) return true;
      for (int k = 0; k < folded.length(); k++) {
        char f = folded.charAt(k);
        if (f < 0x80 && Character.isLetterOrDigit(f)) return true;
      }
    }
    return false;
  }

  /** {@code text} with each full-width form U+FF01-U+FF5E as its ASCII character; {@code text} itself when it has none. */
  private static String fullWidthAsAscii(String text) {
    char[] out = null;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c >= 0xFF01 && c <= 0xFF5E) {
        if (out == null) out = text.toCharArray();
        out[i] = (char) (c - 0xFEE0);
      }
    }
    return out == null ? text : new String(out);
  }

  /** The ASCII characters {@link #scan} looks at: digits, '@', '%', closing brackets and the ends of {@link #secretAnchor}s. */
  private static final boolean[] SCANNED = new boolean[128];

  static {
    for (char c : "0123456789@%)]}>-_JAa/rR:=".toCharArray()) SCANNED[c] = true;
  }

  private static Scan scan(String text, boolean normalised) {
    String seen = escapedBreaksUnescaped(text); // what the anchors and patterns read; text itself when it has none
    int digits = 0;
    boolean at = false;
    boolean percent = false;
    boolean fullWidth = false;
    boolean secretHint = false;
    boolean numberLookAlikes = false;
    boolean stops = false;
    boolean invisible = false;
    boolean fullWidthX = false;
    boolean bracketedAt = false;
    for (int i = 0, n = text.length(); i < n; i++) {
      char c = text.charAt(i);
      if (c < 0x80) {
        if (!SCANNED[c]) continue; // most characters of a text: one look-up
        if (c >= '0' && c <= '9') {
          digits++;
        } else if (c == '@') {
          at = true;
        } else if (c == '%') {
          percent = true;
        } else if (c == ')' || c == ']' || c == '}' || c == '>') {
          bracketedAt = bracketedAt || bracketedAtOrDot(seen, i);
        } else if (!secretHint) {
          secretHint = secretAnchor(seen, i, c);
        }
        continue;
      }
      if (c >= 0x3400 && c < 0xA000) continue; // CJK ideographs: the bulk of Chinese text, nothing to fold
      if (Character.getType(c) == Character.FORMAT) {
        invisible |= hiding(text, i);
        continue;
      }
      if (!normalised) {
        if (foldable(c, text, i)) return scan(Normalizer.normalize(text, Normalizer.Form.NFKC), true);
        // Full-width punctuation is everyday Chinese text: it matters only next to an '@' (a
        // full-width '．' in an e-mail's domain), so it alone does not cost a normalisation.
        fullWidth |= c >= 0xFF01 && c <= 0xFF5E;
        fullWidthX |= c == 0xFF38 || c == 0xFF58;
      }
      char a = lookAlike(c);
      if (a == '.') {
        stops = true;
      } else if (a != 0) {
        numberLookAlikes = true; // a digit of another script or a space or dash between digit groups
        if (a != ' ' && a != '-') digits++;
      }
    }
    if (fullWidth && at) return scan(Normalizer.normalize(text, Normalizer.Form.NFKC), true);
    // An ID number's check character typed full-width after ASCII digits (11010519491231002Ｘ) was
    // stored raw: it needs 17 digits beside it, so an 'Ｘ' in ordinary text costs no normalisation (trial t159).
    if (fullWidthX && digits >= 17) return scan(Normalizer.normalize(text, Normalizer.Form.NFKC), true);
    if (invisible && (at || percent || digits >= 7)) return scan(withoutHiding(text), normalised);
    // A look-alike matters only where a pattern could match: numbers need 7 digits, e-mails an '@'.
    boolean fold = numberLookAlikes && digits >= 7 || stops && (at || percent);
    return new Scan(text, fold ? foldLookAlikes(seen) : seen, digits, at, percent, secretHint, bracketedAt);
  }

  /**
   * {@code text} with each escaped line break or tab ({@code \n}, {@code \r}, {@code \t}: a backslash and a
   * letter) as a space and the character it stands for, one for one. A JSON text inside a message or a
   * tool's output holds its lines so, and the rules that want no letter or digit before what they take read the
   * 'n' as one: {@code …\nsk-…}, {@code …\nAuthorization: Basic …}, a card or an IBAN starting such a line
   * were stored raw (review t161; the export's final scan decodes JSON lines for the same reason). An escaped
   * backslash ({@code \\n}) is no line break.
   */
  private static String escapedBreaksUnescaped(String text) {
    int i = text.indexOf('\\');
    if (i < 0) return text;
    char[] out = null;
    int n = text.length();
    while (i >= 0 && i + 1 < n) {
      char e = text.charAt(i + 1);
      char as = e == 'n' ? '\n' : e == 'r' ? '\r' : e == 't' ? '\t' : 0;
      if (as != 0) {
        if (out == null) out = text.toCharArray();
        // the backslash as a space: a value's span ("password=Abcdefg1\nnext") ends before the escape, which
        // stays as sent, rather than taking the backslash and leaving its letter glued to the next word
        out[i] = ' ';
        out[i + 1] = as;
      }
      i = text.indexOf('\\', i + 2); // past an escaped backslash too
    }
    return out == null ? text : new String(out);
  }

  /**
   * The ASCII character a pattern should see for {@code c}, or 0: a digit of any script (Arabic-Indic
   * U+0660-0669, extended U+06F0-06F9, ...; NFKC keeps them), a space of any width (no-break U+00A0,
   * thin U+2009, narrow no-break U+202F, ideographic U+3000, ...) as ' ', the hyphens and dashes
   * U+2010-2015, the minus sign U+2212 and the small and full-width hyphen-minus as '-', and the
   * ideographic, full-width and half-width full stops as '.' ({@link #foldLookAlikes} takes a stop
   * only inside an e-mail-like token).
   */
  static char lookAlike(char c) {
    if (c < 0x80) return 0;
    if (c == 0x3002 || c == 0xFF0E || c == 0xFF61) return '.';
    if ((c >= 0x2010 && c <= 0x2015) || c == 0x2212 || c == 0xFE58 || c == 0xFE63 || c == 0xFF0D) return '-';
    int type = Character.getType(c);
    if (type == Character.SPACE_SEPARATOR) return ' ';
    if (type == Character.DECIMAL_DIGIT_NUMBER) return (char) ('0' + Character.digit(c, 10));
    return 0;
  }

  /**
   * {@code text} with every {@link #lookAlike} replaced, one character for one. A full stop is taken
   * for '.' only when an ASCII letter or digit follows it ({@code name@example。com}): an ideographic
   * full stop ends most Chinese sentences, and "回复@张三。好的" (an @-mention) is no e-mail.
   */
  private static String foldLookAlikes(String text) {
    char[] out = text.toCharArray();
    for (int i = 0; i < out.length; i++) {
      char a = lookAlike(out[i]);
      if (a == 0) continue;
      if (a == '.' && !(i + 1 < out.length && out[i + 1] < 0x80 && asciiAlnum(out[i + 1]))) continue;
      out[i] = a;
    }
    return new String(out);
  }

  /**
   * Whether the character at {@code i} ends one of the prefixes {@link #SECRET} starts with: "sk-",
   * "sk_"/"rk_", "hf_", "gsk_", "r8_", "gh?_", "github_pat_" (its "pat_"), "xox?-", "xapp-", "xai-", "nvapi-",
   * "glpat-", "eyJ", "AKIA"/"ASIA", "AIza",
   * "Bearer" and a URL's "://".
   * A few comparisons on the characters that can end one, so the secret pattern runs only on texts
   * that hold such a prefix.
   */
  private static boolean asciiAlnum(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  }

  // "sk-"/"sk_" must start a word ("task-based", "risk_free" are everyday text and would run the
  // pattern for nothing).
  private static boolean secretAnchor(String t, int i, char c) {
    if (i < 2) return false;
    char a = t.charAt(i - 2);
    char b = t.charAt(i - 1);
    return switch (c) {
      case '-' -> (a == 's' && b == 'k' && (i < 3 || !asciiAlnum(t.charAt(i - 3)))) || (i >= 4 && t.charAt(i - 4) == 'x'
          && ((t.charAt(i - 3) == 'o' && a == 'x') || (t.charAt(i - 3) == 'a' && a == 'p' && b == 'p')))
          || (i >= 3 && t.charAt(i - 3) == 'x' && a == 'a' && b == 'i') // xai-
          || (i >= 3 && t.charAt(i - 3) == 'a' && a == 'p' && b == 'i') // nvapi-
          || (i >= 3 && t.charAt(i - 3) == 'p' && a == 'a' && b == 't') // glpat-
          || (i >= 11 && t.regionMatches(i - 11, "PRIVATE KEY", 0, 11)) // -----BEGIN … PRIVATE KEY-----
          || (i >= 9 && t.regionMatches(i - 9, "KEY BLOCK", 0, 9)); // -----BEGIN PGP PRIVATE KEY BLOCK-----
      case '_' -> (((b == 'k' && (a == 's' || a == 'r')) || (a == 'h' && b == 'f') || (a == 'r' && b == '8'))
              && (i < 3 || !asciiAlnum(t.charAt(i - 3))))
          || (i >= 3 && t.charAt(i - 3) == 'g' && a == 'h')
          || (i >= 3 && t.charAt(i - 3) == 'g' && a == 's' && b == 'k') // gsk_
          || (i >= 3 && t.charAt(i - 3) == 'p' && a == 'a' && b == 't');
      case 'J' -> a == 'e' && b == 'y';
      case '/' -> (a == ':' && b == '/') // "://" of a URL, which may carry user:password
          || (b == 'm' && i >= 9 && t.regionMatches(i - 9, "slack.com", 0, 9)) // a webhook without its scheme
          || (b == 's' && i >= 8 && t.regionMatches(i - 8, "webhooks", 0, 8));
      case ':', '=' -> credentialHint(t, i); // password=…, "api_key": "…"
      case 'r', 'R' -> i >= 5 && t.regionMatches(true, i - 5, "beare", 0, 5); // "Bearer"
      case 'A' -> i >= 3 && t.charAt(i - 3) == 'A' && (a == 'K' || a == 'S') && b == 'I';
      default -> i >= 3 && t.charAt(i - 3) == 'A' && a == 'I' && b == 'z'; // 'a' of "AIza"
    };
  }

  /**
   * Whether the invisible format character at {@code i} (zero-width space, soft hyphen, word joiner,
   * BOM, a bidi mark: Unicode Cf) sits between two ASCII characters, past any others of its kind:
   * inside {@code alice\u200B@example.com} it hid the address from every rule while a reader sees
   * it whole. Such a character is dropped from the text the rules see and, when they find something,
   * from the text stored, as NFKC folds look-alikes. One between non-ASCII characters (an emoji's
   * zero-width joiner, a bidi mark in Arabic or Hebrew text) is left alone.
   */
  private static boolean hiding(String text, int i) {
    int before = i - 1;
    while (before >= 0 && Character.getType(text.charAt(before)) == Character.FORMAT) before--;
    int after = i + 1;
    while (after < text.length() && Character.getType(text.charAt(after)) == Character.FORMAT) after++;
    return (before < 0 || text.charAt(before) < 0x80) && (after >= text.length() || text.charAt(after) < 0x80);
  }

  /** Whether the closing bracket at {@code i} closes "at", "dot" or "@" ({@link #OBFUSCATED_EMAIL}'s "(at)", "[dot]"). */
  private static boolean bracketedAtOrDot(String t, int i) {
    int e = i > 0 && t.charAt(i - 1) == ' ' ? i - 1 : i;
    int word = e >= 1 && t.charAt(e - 1) == '@' ? e - 1
        : endsWithIgnoreCase(t, e, "at") ? e - 2 : endsWithIgnoreCase(t, e, "dot") ? e - 3 : -1;
    // the word alone in its brackets: "(format)", "<stat>" and "[chat]" do not run the pattern
    return word >= 1 && "([{< ".indexOf(t.charAt(word - 1)) >= 0;
  }

  private static String withoutHiding(String text) {
    StringBuilder b = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.getType(c) != Character.FORMAT || !hiding(text, i)) b.append(c);
    }
    return b.toString();
  }

  /** Whether NFKC may turn this character into a digit, '@', '%' or '+' (or it is a digit of another script). */
  private static boolean foldable(char c, String text, int i) {
    if ((c >= 0xFF10 && c <= 0xFF19) || c == 0xFF20 || c == 0xFF05 || c == 0xFF0B) return true; // full-width 0-9 @ % +
    if (c == 0xFE6B || c == 0xFE6A || c == 0xFE62) return true; // small @ % +
    if (Character.isHighSurrogate(c) && i + 1 < text.length()) {
      int cp = Character.toCodePoint(c, text.charAt(i + 1));
      return Character.getType(cp) == Character.DECIMAL_DIGIT_NUMBER;
    }
    int type = Character.getType(c);
    return type == Character.DECIMAL_DIGIT_NUMBER || type == Character.OTHER_NUMBER;
  }

  /** A provider's key as a whole part of an id: not glued to a letter or digit on either side. */
  private static final Pattern PROVIDER_KEY_IN_ID = Pattern.compile(
      "(?<![0-9A-Za-z])(?:" + PROVIDER_KEYS + ")(?![0-9A-Za-z])");

  /** The shortest key an id is refused for: a real one is longer ({@code AKIA} + 16, {@code sk-} + 20 and up). */
  private static final int MIN_KEY_IN_ID = 20;

  /**
   * Whether an id (a session's, an agent's) holds a provider's API key or a JWT as itself or as a whole
   * part ({@code gwa-sk-proj-…}, {@code sk-proj-…:1}): {@code X-Agent-Id: sk-proj-…}, the agent's key in
   * the wrong header, was logged, put in metric labels and journaled as the agent id (trial t159).
   * Only the providers' key formats count, as the desensitizer matches and judges them
   * ({@link #secret}: an {@code sk-} key's body looks random, 20 characters or more): an id is no
   * text, so a credential's assignment, a URL or an Authorization header are no findings in it, and
   * {@code support:reset-password:ticket-48213}, {@code user-token:20240101a}, {@code sk-learn-demo},
   * {@code hf_session_1} and {@code task-sk-2} stay valid ids.
   */
  public static boolean keyInId(String id) {
    if (id == null || id.length() < MIN_KEY_IN_ID) return false;
    Matcher m = PROVIDER_KEY_IN_ID.matcher(id);
    while (m.find()) {
      if (m.end() - m.start() < MIN_KEY_IN_ID) continue;
      int[] hit = secret(id, m.start(), m.end());
      if (hit != null && hit[0] != RESUME) return true;
    }
    return false;
  }

  /**
   * Whether the {@link #SECRET} match {@code t[start, end)} is one, or null. An {@code sk-} key's
   * body must hold a run of 16 or more letters and digits with a digit or a capital in it: random
   * keys always do, hyphenated words ("sk-learn-compatible-pipeline-code") do not. Slack tokens
   * hold digits. The other formats are specific enough as matched.
   */
  static int[] secret(CharSequence t, int start, int end) {
    return secret(t, start, end, 0);
  }

  /**
   * How many candidates an assignment's value is searched for, and how deep: enough for
   * {@code ?password=x&token=hf_…&sig=…}. Unbounded, a text of {@code "pass:"} repeated to 64 KB searched
   * every rest of itself at every level, 2 s and then a stack overflow that stored the whole text as
   * [SECRET] (review t166).
   */
  private static final int INNER_CANDIDATES = 8;
  private static final int INNER_DEPTH = 2;

  /**
   * What {@link #secret} answers for a candidate that is no finding but whose search goes on inside it
   * ({@code {RESUME, from}}): a query parameter's match runs to the end of the query.
   */
  static final int RESUME = -1;

  /** Where a credential's value matched up to {@code end} ends: past {@link #MAX_VALUE}, the match stopped short of it. */
  private static int valueEnd(CharSequence t, int end) {
    int i = end;
    while (i < t.length() && !Character.isWhitespace(t.charAt(i)) && "\"'<>,;&".indexOf(t.charAt(i)) < 0) i++;
    return i;
  }

  /** A key of a known format inside {@code t[from, to)} (not at {@code after}), searched a bounded number of times. */
  private static int[] keyInside(CharSequence t, int from, int to, int after, int depth) {
    if (depth >= INNER_DEPTH || from >= to) return null;
    Matcher inner = SECRET.matcher(t).region(from, to);
    inner.useTransparentBounds(true);
    for (int n = 0; n < INNER_CANDIDATES && inner.find(); n++) {
      int[] hit = inner.start() > after ? secret(t, inner.start(), inner.end(), depth + 1) : null;
      if (hit != null && hit[0] != RESUME) return hit;
    }
    return null;
  }

  private static int[] secret(CharSequence t, int start, int end, int depth) {
    char c0 = t.charAt(start);
    if (c0 == '-') return PemBlock.span(t, start, end); // a PEM private key: its header, body and END line
    int assign = assignment(t, start, end);
    if (assign >= 0) {
      // in a URL's query the value ends at the next parameter: ?api_key=[SECRET]&q=1, the rest of the URL kept
      boolean query = inQuery(t, start);
      // (a value longer than one match takes is extended at the top only: nested, that read the text's rest again)
      int matched = depth == 0 ? valueEnd(t, end) : end;
      int value = query ? queryValueEnd(t, assign, matched) : matched;
      // the name kept; "password: required", "api_key=changeme": no digit, no credential
      if (!testVerdict(t, start, assign) && value - assign >= 8 && holdsDigit(t, assign, value)
          && !(namedPass(t, assign) && plainNumber(t, assign, value))) {
        return new int[] {assign, value};
      }
      // ... unless the value is a key of a known format: a Hugging Face token may be all letters (HF_TOKEN=hf_AbC…)
      int[] inside = keyInside(t, assign, value, start, depth);
      if (inside != null) return inside;
      // A query's later parameters (?password=&user_token=abc&api_key=…) are searched as any text is, from this
      // one's end: nested in this match, they were reached two deep at most (review t168).
      return query && value < end ? new int[] {RESUME, value} : null;
    }
    if ((c0 == 'a' || c0 == 'A') && end - start > 13
        && t.subSequence(start, start + 13).toString().equalsIgnoreCase("authorization")) {
      return authorizationCredential(t, start, end);
    }
    int query = queryToken(t, start, end);
    if (query >= 0) {
      if (holdsDigit(t, query, end) && holdsLetter(t, query, end)) return new int[] {query, end};
      return keyInside(t, query, end, start, depth); // ?token=hf_… (all letters)
    }
    int hook = webhookPath(t, start, end);
    if (hook >= 0) return holdsDigit(t, hook, end) ? new int[] {hook, end} : null; // the host and "/services/" kept
    int scheme = indexOf(t, "://", start, end);
    if (scheme >= 0) return new int[] {scheme + 3, end - 1}; // user:password, the '@' kept
    if ((c0 == 'b' || c0 == 'B') && end - start > 6 && Character.toLowerCase(t.charAt(start + 5)) == 'r'
        && (t.charAt(start + 6) == ' ' || t.charAt(start + 6) == '\t')) {
      int token = start + 6;
      while (t.charAt(token) == ' ' || t.charAt(token) == '\t') token++;
      // "Bearer " kept; "Bearer authentication-is-the-default": words, no token
      return holdsDigit(t, token, end) ? new int[] {token, end} : null;
    }
    boolean ok = (c0 == 's' && t.charAt(start + 2) == '-') || (c0 == 'h' && t.charAt(start + 2) == '_') ? randomRun(t, start + 3, end, 16)
        : providerPrefix(t, start) ? twoKinds(t, indexOfBody(t, start, end), end)
        : c0 != 'x' || randomRun(t, start + 5, end, 1);
    return ok ? new int[] {start, end} : null;
  }

  /**
   * The credential of an {@code Authorization: Basic|Token …} match, or null: a Basic one is base64 of
   * {@code user:password} (may hold no digit: "dXNlcjpwYXNz"), so it is decoded and must hold a ':'; a
   * Token one must hold a digit, as a Bearer token must ("Token required" is words).
   */
  private static int[] authorizationCredential(CharSequence t, int start, int end) {
    int i = start + "authorization".length();
    while (i < end && !Character.isLetter(t.charAt(i))) i++; // quote, ':' or '=', spaces
    boolean basic = Character.toLowerCase(t.charAt(i)) == 'b';
    i += 5; // "basic" and "token" both have five letters
    while (i < end && (t.charAt(i) == ' ' || t.charAt(i) == '\t')) i++;
    if (!basic) return holdsDigit(t, i, end) ? new int[] {i, end} : null;
    try {
      byte[] decoded = java.util.Base64.getDecoder().decode(t.subSequence(i, end).toString());
      return new String(decoded, java.nio.charset.StandardCharsets.UTF_8).indexOf(':') > 0 ? new int[] {i, end} : null;
    } catch (IllegalArgumentException notBase64) {
      return null;
    }
  }

  /** Whether the match at {@code start} is a Groq, Replicate, xAI, NVIDIA or GitLab key (see {@link #SECRET}). */
  private static boolean providerPrefix(CharSequence t, int start) {
    char c0 = t.charAt(start);
    char c1 = t.charAt(start + 1);
    return (c0 == 'g' && (c1 == 's' || c1 == 'l')) || (c0 == 'r' && c1 == '8') || (c0 == 'n' && c1 == 'v')
        || (c0 == 'x' && c1 == 'a' && t.charAt(start + 2) == 'i');
  }

  /** Where the key after a provider's prefix starts: past its first '-' or '_'. */
  private static int indexOfBody(CharSequence t, int start, int end) {
    int i = start;
    while (i < end && t.charAt(i) != '-' && t.charAt(i) != '_') i++;
    return i + 1;
  }

  /**
   * Whether {@code t[from, to)} mixes two of lower-case letters, capitals and digits, as every random
   * key does: a placeholder ({@code glpat-xxxxxxxxxxxxxxxxxxxx}, {@code XXXX…}) or a hyphenated
   * lower-case name stays.
   */
  private static boolean twoKinds(CharSequence t, int from, int to) {
    boolean lower = false;
    boolean upper = false;
    boolean digit = false;
    for (int i = from; i < to; i++) {
      char c = t.charAt(i);
      lower |= c >= 'a' && c <= 'z';
      upper |= c >= 'A' && c <= 'Z';
      digit |= c >= '0' && c <= '9';
    }
    return (lower ? 1 : 0) + (upper ? 1 : 0) + (digit ? 1 : 0) >= 2;
  }

  /** Whether the ':' or '=' at {@code i} follows a name ending as a {@link #CREDENTIAL_NAME} does. */
  private static boolean credentialHint(String t, int i) {
    int e = i;
    while (e > 0 && (t.charAt(e - 1) == ' ' || t.charAt(e - 1) == '\t')) e--;
    if (e > 0 && (t.charAt(e - 1) == '"' || t.charAt(e - 1) == '\'')) e--;
    return endsWithIgnoreCase(t, e, "word") || endsWithIgnoreCase(t, e, "wd") || endsWithIgnoreCase(t, e, "key")
        || endsWithIgnoreCase(t, e, "secret") || endsWithIgnoreCase(t, e, "token")
        || endsWithIgnoreCase(t, e, "authorization") || endsWithIgnoreCase(t, e, "pass")
        || endsWithIgnoreCase(t, e, "phrase") || endsWithIgnoreCase(t, e, "credential")
        || endsWithIgnoreCase(t, e, "credentials") || endsWithIgnoreCase(t, e, "sig")
        || endsWithIgnoreCase(t, e, "signature");
  }

  private static boolean endsWithIgnoreCase(String t, int end, String suffix) {
    return end >= suffix.length() && t.regionMatches(true, end - suffix.length(), suffix, 0, suffix.length());
  }

  /** Where the value of a credential assignment matched at {@code t[start, end)} starts, or -1. */
  private static int assignment(CharSequence t, int start, int end) {
    Matcher m = CREDENTIAL_KEY.matcher(t).region(start, end);
    m.useTransparentBounds(true);
    if (!m.lookingAt()) return -1;
    int i = m.end();
    if (i < end && (t.charAt(i) == '"' || t.charAt(i) == '\'')) i++;
    while (i < end && (t.charAt(i) == ' ' || t.charAt(i) == '\t')) i++;
    if (i >= end || (t.charAt(i) != ':' && t.charAt(i) != '=')) return -1;
    i++;
    while (i < end && (t.charAt(i) == ' ' || t.charAt(i) == '\t')) i++;
    if (i < end && (t.charAt(i) == '"' || t.charAt(i) == '\'')) i++;
    return i;
  }

  /** Whether the setting whose value starts at {@code assign} is named "…pass" (DB_PASS), not "password". */
  private static boolean namedPass(CharSequence t, int assign) {
    int e = assign;
    while (e > 0 && " \t\"':=".indexOf(t.charAt(e - 1)) >= 0) e--;
    return e >= 4 && t.subSequence(e - 4, e).toString().equalsIgnoreCase("pass");
  }

  /**
   * Whether the assignment at {@code start} is a test runner's verdict: a bare {@code PASS} in capitals (not
   * DB_PASS) with a colon and an unquoted value, as Go ({@code --- PASS: TestX (0.00s)}) and Automake
   * ({@code PASS: t/a.sh}) print it, which the rule for …PASS settings (trial t162) took for a password
   * (review t166). Its value is not taken, but a key inside it still is. {@code PASS=…}, {@code pass: …} (YAML,
   * nodemailer's {@code pass: 'secret'}) and a quoted value still count.
   */
  private static boolean testVerdict(CharSequence t, int start, int assign) {
    if (assign - start < 5 || !"PASS".contentEquals(t.subSequence(start, start + 4))) return false;
    char after = t.charAt(start + 4);
    if (after != ':' && after != ' ' && after != '\t') return false;
    if (start > 0 && (t.charAt(start - 1) == '_' || t.charAt(start - 1) == '-')) return false; // SMTP_PASS: …
    boolean colon = false;
    for (int i = start + 4; i < assign; i++) {
      char c = t.charAt(i);
      if (c == '"' || c == '\'') return false;
      colon |= c == ':';
    }
    return colon;
  }

  /** Whether {@code t[from, to)} is a number, a ratio, a percentage, a date or a time: a test's result, no password. */
  private static boolean plainNumber(CharSequence t, int from, int to) {
    for (int i = from; i < to; i++) {
      if ("0123456789.,:/%+-".indexOf(t.charAt(i)) < 0) return false;
    }
    return true;
  }

  /**
   * Whether the setting matched at {@code start} is a URL's query parameter: '?' or '&' before its name, a
   * '&' after a value (a shell's {@code make&&PASSWORD=p4ss&w0rd1} is no query: its value is taken whole).
   */
  private static boolean inQuery(CharSequence t, int start) {
    int i = start - 1;
    while (i >= 0 && (asciiAlnum(t.charAt(i)) || t.charAt(i) == '_' || t.charAt(i) == '-' || t.charAt(i) == '.')) i--;
    if (i < 0) return false;
    if (t.charAt(i) == '?') return true;
    return t.charAt(i) == '&' && i > 0 && t.charAt(i - 1) != '&' && !Character.isWhitespace(t.charAt(i - 1));
  }

  /** Where a query parameter's value starting at {@code from} ends: at the next '&' or the fragment's '#'. */
  private static int queryValueEnd(CharSequence t, int from, int end) {
    for (int i = from; i < end; i++) if (t.charAt(i) == '&' || t.charAt(i) == '#') return i;
    return end;
  }

  /** The parameter names {@link #SECRET} takes a token after only in a URL's query. */
  private static final java.util.Set<String> QUERY_TOKEN_NAMES =
      java.util.Set.of("key", "token", "sig", "signature", "x-amz-signature", "x-goog-signature");

  /** Where the value of a query's {@code key=}, {@code token=}, {@code sig=} … matched at {@code start} starts, or -1. */
  private static int queryToken(CharSequence t, int start, int end) {
    if (start == 0 || (t.charAt(start - 1) != '?' && t.charAt(start - 1) != '&')) return -1;
    int eq = indexOf(t, "=", start, Math.min(end, start + 17));
    if (eq < 0) return -1;
    return QUERY_TOKEN_NAMES.contains(t.subSequence(start, eq).toString().toLowerCase(java.util.Locale.ROOT)) ? eq + 1 : -1;
  }

  /** Where the credential of a Slack or Discord webhook URL matched at {@code start} starts (its path), or -1. */
  private static int webhookPath(CharSequence t, int start, int end) {
    if (indexOf(t, "hooks.slack.com/", start, Math.min(end, start + 16)) == start) {
      return indexOf(t, "/", start + 16, end) + 1; // past "services/"
    }
    int w = t.charAt(start) == 'd' ? indexOf(t, "/webhooks/", start, Math.min(end, start + 30)) : -1;
    return w < 0 ? -1 : w + "/webhooks/".length();
  }

  private static boolean holdsLetter(CharSequence t, int from, int to) {
    for (int i = from; i < to; i++) {
      char c = t.charAt(i);
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) return true;
    }
    return false;
  }

  /** Whether {@code t[from, to)} holds an ASCII digit: what tells a credential from a word. */
  private static boolean holdsDigit(CharSequence t, int from, int to) {
    for (int i = from; i < to; i++) {
      if (t.charAt(i) >= '0' && t.charAt(i) <= '9') return true;
    }
    return false;
  }

  private static int indexOf(CharSequence t, String what, int from, int to) {
    outer:
    for (int i = from; i + what.length() <= to; i++) {
      for (int k = 0; k < what.length(); k++) {
        if (t.charAt(i + k) != what.charAt(k)) continue outer;
      }
      return i;
    }
    return -1;
  }

  /** Whether {@code t[from, to)} has a run of at least {@code min} letters/digits holding a digit or a capital. */
  private static boolean randomRun(CharSequence t, int from, int to, int min) {
    int run = 0;
    boolean mixed = false;
    for (int i = from; i < to; i++) {
      char c = t.charAt(i);
      boolean alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
      if (!alnum) {
        run = 0;
        mixed = false;
        continue;
      }
      run++;
      mixed |= c <= 'Z';
      if (run >= min && mixed) return true;
    }
    return false;
  }

  /** The text as the patterns see it (see {@link #scan}). */
  public static String fold(String text) {
    return scan(text).match();
  }

  /**
   * What an identifier looks like when it looks like PII ("a phone number", "an ID card number", "an
   * e-mail address"), else null. A canonical UUID is opaque by construction and never refused, whole
   * or as a part ({@code sess-<uuid>}): its hex groups may hold phone-shaped digit runs by chance
   * (about one UUID in a thousand; a gateway test's {@code long-<uuid>} session was refused so).
   */
  public static String looksLike(String id) {
    if (id == null || id.isEmpty() || isUuid(id)) return null;
    if (id.length() > 36 && id.indexOf('-') >= 0) {
      id = EMBEDDED_UUID.matcher(id).replaceAll("~");
      if (id.equals("~")) return null;
    }
    Scan f = scan(id);
    if (f.digits() >= 15 && findsOutsideHex(ID_CARD, f.match())) return "an ID card number";
    if (f.digits() >= 7 && findsOutsideHex(PHONE, f.match())) return "a phone number";
    if (f.digits() >= 13 && hasCard(f.match())) return "a bank card number";
    if (f.mayHoldEmail() && EMAIL.matcher(f.match()).find()) return "an e-mail address";
    return null;
  }

  private static boolean hasCard(String text) {
    Matcher m = BANK_CARD.matcher(text);
    while (m.find()) if (PaymentNumbers.bankCard(text, m.start(), m.end()) != null) return true;
    return false;
  }

  /** The shortest hex token taken for random, given digits beside its match ({@link #outsideHexToken}). */
  static final int MIN_OPAQUE_HEX = 16;

  /** Below {@link #ALWAYS_OPAQUE_HEX}: how many characters beside the match, one a digit, make a token random. */
  static final int MIN_BESIDE_MATCH = 5;

  /** A token this long holding a letter is random whatever it holds (a response id, a digest). */
  static final int ALWAYS_OPAQUE_HEX = 24;

  /**
   * {@code {start, end}} unless the match {@code t[start, end)} lies inside a standalone token of 16
   * or more hex digits holding a letter: a response id ({@code chatcmpl-<32 hex>}, about one in a
   * hundred holds a phone-shaped digit run), a digest, an object id, a client's random event id
   * ({@code secrets.token_hex(8)}: one in 1,800 held one, and its whole batch was refused, trial t120).
   * Such a token is random, no one's number, and an id must stay intact to be matched again (per-turn
   * feedback names it). Below 24 digits the token must also hold at least five characters beside the
   * match, a decimal digit among them, as a random one of 16 holding a phone-shaped run nearly always
   * does: a number with letters glued to it ({@code c13812345678}, an ID card number in
   * {@code fD222601198909138180}, a word of hex letters: {@code Added13812345678}, review t122) is someone's.
   * Digits glued to other letters ({@code tel_13889012345}, {@code ID110107199003071288}) are
   * still findings: only a token that is hex from end to end is opaque.
   */
  static int[] outsideHexToken(CharSequence t, int start, int end) {
    for (int i = start; i < end; i++) if (!hex(t.charAt(i))) return new int[] {start, end};
    int from = start;
    while (from > 0 && hex(t.charAt(from - 1))) from--;
    int to = end;
    while (to < t.length() && hex(t.charAt(to))) to++;
    boolean standalone = (from == 0 || !asciiAlnum(t.charAt(from - 1)))
        && (to == t.length() || !asciiAlnum(t.charAt(to)));
    if (!standalone || !random(t, from, start, end, to)) return new int[] {start, end};
    for (int i = from; i < to; i++) if (t.charAt(i) > '9') return null;
    return new int[] {start, end};
  }

  /** Whether the hex token {@code t[from, to)} around the match {@code t[start, end)} reads as random. */
  private static boolean random(CharSequence t, int from, int start, int end, int to) {
    int token = to - from;
    if (token >= ALWAYS_OPAQUE_HEX) return true;
    if (token < MIN_OPAQUE_HEX || token - (end - start) < MIN_BESIDE_MATCH) return false;
    for (int i = from; i < to; i++) {
      if ((i < start || i >= end) && t.charAt(i) >= '0' && t.charAt(i) <= '9') return true;
    }
    return false;
  }

  private static boolean hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }

  /** Whether {@code pattern} finds something in {@code text} that {@link #outsideHexToken} lets stand. */
  private static boolean findsOutsideHex(Pattern pattern, String text) {
    Matcher m = pattern.matcher(text);
    while (m.find()) if (outsideHexToken(text, m.start(), m.end()) != null) return true;
    return false;
  }

  /**
   * Whether a whole value is a canonical UUID (8-4-4-4-12 hex digits; message and call ids): left as
   * it is. A loop rather than a regex: every id of every recorded event is checked.
   */
  static boolean isUuid(String value) {
    if (value.length() != 36) return false;
    for (int i = 0; i < 36; i++) {
      char c = value.charAt(i);
      boolean ok = i == 8 || i == 13 || i == 18 || i == 23
          ? c == '-'
          : (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
      if (!ok) return false;
    }
    return true;
  }
}
