package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * 10,000 generated cases (seeded, so a failure reproduces): fresh phone numbers, ID numbers and
 * e-mails in random shapes, embedded in random text and in JSON (values, keys, integers), glued to
 * letters, '_' or CJK text. Not one may survive desensitization.
 */
class DesensitizerRandomTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  private static final String CJK = "你好请问订单号码联系我们谢谢用户客服";
  private final Desensitizer d = new Desensitizer(true, List.of("phone", "id_card", "email"), List.of());

  @Test
  void tenThousandGeneratedCasesLeakNothing() throws Exception {
    Random r = new Random(20261130L);
    List<String> leaks = new ArrayList<>();
    for (int i = 0; i < 10_000; i++) {
      PiiSamples.Sample s = generate(r);
      String text = filler(r) + glue(r) + s.text() + glue(r) + filler(r);
      String stored = switch (r.nextInt(4)) {
        case 0 -> d.apply(text);
        case 1 -> {
          ObjectNode o = JSON.createObjectNode();
          o.put("q", text);
          o.putArray("list").add(filler(r)).add(text);
          yield JSON.writeValueAsString(d.apply(o));
        }
        case 2 -> {
          ObjectNode o = JSON.createObjectNode();
          o.put(text, 1);
          o.put(filler(r), 2);
          yield JSON.writeValueAsString(d.apply(o));
        }
        default -> {
          // a bare integer when the sample is all digits, else the text again in a nested value
          String digits = s.text();
          ObjectNode o = JSON.createObjectNode();
          if (digits.matches("[1-9][0-9]{6,17}")) {
            o.set("num", JSON.readTree(digits));
          } else {
            o.putObject("a").putObject("b").put("c", text);
          }
          yield JSON.writeValueAsString(d.apply(o));
        }
      };
      if (s.leaksIn(stored)) leaks.add(s.name() + ": " + text + " -> " + stored);
    }
    assertEquals(List.of(), leaks.subList(0, Math.min(20, leaks.size())), leaks.size() + " leaks");
  }

  /** A separator a client might put between words and the PII: never a digit. */
  private static String glue(Random r) {
    return switch (r.nextInt(6)) {
      case 0 -> " ";
      case 1 -> "_";
      case 2 -> "";
      case 3 -> String.valueOf(CJK.charAt(r.nextInt(CJK.length())));
      case 4 -> ":";
      default -> "(";
    };
  }

  private static String filler(Random r) {
    StringBuilder b = new StringBuilder();
    int words = r.nextInt(6);
    for (int w = 0; w < words; w++) {
      if (w > 0) b.append(' ');
      int len = 1 + r.nextInt(8);
      boolean cjk = r.nextInt(4) == 0;
      for (int c = 0; c < len; c++) {
        b.append(cjk ? CJK.charAt(r.nextInt(CJK.length())) : LETTERS.charAt(r.nextInt(LETTERS.length())));
      }
    }
    return b.toString();
  }

  private static PiiSamples.Sample generate(Random r) {
    return switch (r.nextInt(3)) {
      case 0 -> phone(r);
      case 1 -> idCard(r);
      default -> email(r);
    };
  }

  private static PiiSamples.Sample phone(Random r) {
    StringBuilder digits = new StringBuilder("1").append(3 + r.nextInt(7));
    for (int i = 0; i < 9; i++) digits.append(r.nextInt(10));
    String n = digits.toString();
    String sep = List.of("", " ", "-", ".").get(r.nextInt(4));
    String body = switch (r.nextInt(3)) {
      case 0 -> n;
      case 1 -> n.substring(0, 3) + sep + n.substring(3, 7) + sep + n.substring(7);
      default -> "(" + n.substring(0, 3) + ") " + n.substring(3, 7) + " " + n.substring(7);
    };
    String prefix = List.of("", "", "+86 ", "+86", "0086", "+86-").get(r.nextInt(6));
    String text = prefix + body;
    if (r.nextInt(5) == 0) text = fullWidth(text);
    return new PiiSamples.Sample("phone", text, n, "[PHONE]");
  }

  private static PiiSamples.Sample idCard(Random r) {
    StringBuilder b = new StringBuilder().append(1 + r.nextInt(9));
    for (int i = 0; i < 5; i++) b.append(r.nextInt(10));
    String area = b.toString();
    String date = (1950 + r.nextInt(70)) + String.format("%02d%02d", 1 + r.nextInt(12), 1 + r.nextInt(28));
    String seq = String.format("%03d", r.nextInt(1000));
    String check = r.nextInt(11) == 10 ? "X" : String.valueOf(r.nextInt(10));
    String sep = List.of("", "", " ", "-").get(r.nextInt(4));
    String id = area + date + seq + check;
    String text = (r.nextInt(4) == 0 ? "ID" : "") + area + sep + date + sep + seq + check;
    if (r.nextInt(5) == 0) text = fullWidth(text);
    return new PiiSamples.Sample("id_card", text, id, "[ID_CARD]");
  }

  private static PiiSamples.Sample email(Random r) {
    StringBuilder local = new StringBuilder();
    int len = 3 + r.nextInt(10);
    for (int i = 0; i < len; i++) {
      int k = r.nextInt(10);
      local.append(k < 7 ? LETTERS.charAt(r.nextInt(LETTERS.length())) : k < 9 ? CJK.charAt(r.nextInt(CJK.length()))
          : "._+".charAt(r.nextInt(3)));
    }
    local.insert(0, LETTERS.charAt(r.nextInt(26)));
    local.append(LETTERS.charAt(r.nextInt(26)));
    String domain = List.of("example.com", "mail.example.co.uk", "例子.中国", "correo.es").get(r.nextInt(4));
    String at = List.of("@", "@", "%40", "＠").get(r.nextInt(4));
    String text = local + at + domain;
    if (r.nextInt(6) == 0) text = fullWidth(text);
    return new PiiSamples.Sample("email", text, local.toString(), "[EMAIL]");
  }

  /** ASCII letters, digits and signs to their full-width forms (U+FF01..U+FF5E). */
  private static String fullWidth(String s) {
    StringBuilder b = new StringBuilder();
    for (char c : s.toCharArray()) b.append(c > 0x20 && c < 0x7f ? (char) (c + 0xFEE0) : c);
    return b.toString();
  }
}
