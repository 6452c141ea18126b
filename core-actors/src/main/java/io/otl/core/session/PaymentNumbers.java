package io.otl.core.session;

/**
 * Whether a candidate {@link PiiRules} proposes is a payment number: a bank card (issuer prefix,
 * length, Luhn, grouping) or an IBAN (country, length, mod-97 check). The patterns only propose;
 * these decide, so that order numbers, UUIDs and lists of small numbers stay as sent.
 */
final class PaymentNumbers {
  private PaymentNumbers() {}

  /**
   * Where in the {@link PiiRules#BANK_CARD} candidate {@code t[start, end)} a card number lies, as
   * {@code {from, to}}, or null. A card is either one unbroken run of digits or groups whose first
   * has four digits and the others two to six (4-4-4-4, Amex 4-6-5, 4-4-4-4-3, Diners 4-4-4-2): a
   * list of small numbers ("1 2 3 4 5 …") never adds up to one, nor do a UUID's groups (8-4-4-4-12,
   * even when all digits). Consecutive groups of a longer candidate are tried too, longest first, so
   * "order 12 4111 1111 1111 1111 cvv 123" still loses its card.
   */
  static int[] bankCard(CharSequence t, int start, int end) {
    // Group by group, looking ahead only as far as a card reaches (19 digits): a candidate is one run of
    // groups however long, and splitting all of it at every call made a pasted table of 3,000 cards
    // (65,000 characters, one candidate) cost a second and a half of the session's time, quadratic in its
    // length, as each card found sent the rest of the run back here (trial t105).
    for (int from = start; from < end; ) {
      int firstEnd = groupEnd(t, from, end);
      int firstLen = firstEnd - from;
      if (firstLen >= 13 && firstLen <= 19) {
        if (isCard(t, from, firstEnd)) return new int[] {from, firstEnd}; // an unbroken run stands alone
      } else if (firstLen == 4) {
        int[] card = groupedCard(t, from, firstEnd, end);
        if (card != null) return card;
      }
      from = firstEnd + 1;
    }
    return null;
  }

  /** The longest card of groups starting with the 4-digit group {@code t[from, firstEnd)}, or null. */
  private static int[] groupedCard(CharSequence t, int from, int firstEnd, int end) {
    // After a first group of 4, each further group has 2 to 6 digits and the card at most 19: 7 more at most.
    int[] ends = new int[7];
    int[] digitsTo = new int[7];
    int count = 0;
    int digits = 4;
    int best = -1;
    for (int at = firstEnd; at < end && count < ends.length; ) {
      int groupEnd = groupEnd(t, at + 1, end);
      int len = groupEnd - (at + 1);
      if (len < 2 || len > 6) break;
      digits += len;
      if (digits > 19) break;
      ends[count] = groupEnd;
      digitsTo[count] = digits;
      if (digits >= 13) best = count;
      count++;
      at = groupEnd;
    }
    // Longest first: a 19-digit card is not read as its first 16 digits.
    for (int k = best; k >= 0 && digitsTo[k] >= 13; k--) {
      if (isCard(t, from, ends[k])) return new int[] {from, ends[k]};
    }
    return null;
  }

  /** The end of the digit group starting at {@code from}: the next space or dash, or {@code end}. */
  private static int groupEnd(CharSequence t, int from, int end) {
    int i = from;
    while (i < end && t.charAt(i) != ' ' && t.charAt(i) != '-') i++;
    return i;
  }

  /** Issuer prefix, a length that issuer uses, and the Luhn checksum of the digits in {@code t[from, to)}. */
  static boolean isCard(CharSequence t, int from, int to) {
    StringBuilder d = new StringBuilder(19);
    for (int i = from; i < to; i++) {
      char c = t.charAt(i);
      if (c >= '0' && c <= '9') d.append(c);
    }
    int n = d.length();
    if (n < 13 || n > 19 || !issuerTakes(d, n)) return false;
    int sum = 0;
    for (int i = n - 1, k = 0; i >= 0; i--, k++) {
      int v = d.charAt(i) - '0';
      if (k % 2 == 1) {
        v *= 2;
        if (v > 9) v -= 9;
      }
      sum += v;
    }
    return sum % 10 == 0;
  }

  /**
   * Visa 4 (13, 16 or 19 digits), Mastercard 51-55 and 2221-2720 (16), Amex 34/37 (15), Discover
   * 6011/644-649/65, UnionPay 62 and JCB 3528-3589 (16-19), Diners 300-305/36/38 (14-19). A 13-digit
   * millisecond timestamp (17…) or an ISBN-13 (978…/979…) has no issuer.
   */
  private static boolean issuerTakes(CharSequence d, int n) {
    int p2 = (d.charAt(0) - '0') * 10 + d.charAt(1) - '0';
    int p3 = p2 * 10 + d.charAt(2) - '0';
    int p4 = p3 * 10 + d.charAt(3) - '0';
    if (p2 / 10 == 4) return n == 13 || n == 16 || n == 19;
    if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return n == 16;
    if (p2 == 34 || p2 == 37) return n == 15;
    if (p4 == 6011 || (p3 >= 644 && p3 <= 649) || p2 == 65 || p2 == 62 || (p4 >= 3528 && p4 <= 3589)) {
      return n >= 16;
    }
    if ((p3 >= 300 && p3 <= 305) || p2 == 36 || p2 == 38) return n >= 14;
    return false;
  }

  /** Countries whose banks issue IBANs (SWIFT registry, with the partner territories' own codes). */
  private static final java.util.Set<String> IBAN_COUNTRIES = java.util.Set.of(
      "AD", "AE", "AL", "AT", "AZ", "BA", "BE", "BG", "BH", "BI", "BR", "BY", "CH", "CR", "CY", "CZ",
      "DE", "DJ", "DK", "DO", "EE", "EG", "ES", "FI", "FK", "FO", "FR", "GB", "GE", "GI", "GL", "GR",
      "GT", "HN", "HR", "HU", "IE", "IL", "IQ", "IS", "IT", "JO", "KW", "KZ", "LB", "LC", "LI", "LT",
      "LU", "LV", "LY", "MC", "MD", "ME", "MK", "MN", "MR", "MT", "MU", "NI", "NL", "NO", "OM", "PK",
      "PL", "PS", "PT", "QA", "RO", "RS", "RU", "SA", "SC", "SD", "SE", "SI", "SK", "SM", "SO", "ST",
      "SV", "TL", "TN", "TR", "UA", "VA", "VG", "XK", "YE");

  /**
   * Where in the {@link PiiRules#IBAN} candidate {@code t[start, end)} an IBAN lies, or null: a known
   * country, 15-34 characters without the spaces, check digits 02-98 and the ISO 7064 mod-97
   * checksum. A grouped candidate that fails is tried without its trailing groups, since an upper-case
   * word after the number ("… 7034 THEN") would otherwise hide it.
   */
  static int[] iban(CharSequence t, int start, int end) {
    if (!IBAN_COUNTRIES.contains(t.subSequence(start, start + 2).toString())) return null;
    int check = (t.charAt(start + 2) - '0') * 10 + t.charAt(start + 3) - '0';
    if (check < 2 || check > 98) return null;
    for (int to = end; to > start; ) {
      if (isIban(t, start, to)) return new int[] {start, to};
      int space = -1;
      for (int i = to - 1; i > start; i--) {
        if (t.charAt(i) == ' ') {
          space = i;
          break;
        }
      }
      if (space < 0) break;
      to = space;
    }
    return null;
  }

  private static boolean isIban(CharSequence t, int start, int end) {
    int len = 0;
    for (int i = start; i < end; i++) if (t.charAt(i) != ' ') len++;
    if (len < 15 || len > 34) return false;
    // Country and check digits move to the end; letters count as 10-35.
    int mod = 0;
    for (int k = 0; k < 2; k++) {
      for (int i = k == 0 ? start + 4 : start; i < (k == 0 ? end : start + 4); i++) {
        char c = t.charAt(i);
        if (c == ' ') continue;
        int v = c <= '9' ? c - '0' : c - 'A' + 10;
        mod = v >= 10 ? (mod * 100 + v) % 97 : (mod * 10 + v) % 97;
      }
    }
    return mod == 1;
  }
}
