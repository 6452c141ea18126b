package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A JSON text inside a message or a tool's output (a config file, an HTTP exchange a tool logged) holds its
 * line breaks escaped: a backslash and an {@code n}. The rules that want no letter or digit before what they
 * take read that {@code n} as a letter, so a key, an Authorization header, a card or an e-mail address starting
 * such a line was stored raw (review t161). In these tests {@code "\\n"} is the two characters as sent.
 * Keys are assembled at run time so that no key-shaped literal sits in the source.
 */
class DesensitizerEscapedLineBreakTest {
  private final Desensitizer d = Desensitizer.builtInScanner();
  private static final String KEY = "sk-proj-" + "Qk7x7ZpRt9aB3cD4eF5gH6iJ7kL8mN9oP0qR";
  /** A line of a PEM key's base64 body, 64 characters. */
  private static final String KEY_LINE = "Qk7x7Zp+/Rt".repeat(6).substring(0, 64);

  @Test
  void aKeyStartingAnEscapedLineIsASecret() {
    assertEquals("{\"env\":\"MODE=prod\\n[SECRET]\\nDEBUG=0\"}", d.apply("{\"env\":\"MODE=prod\\n" + KEY + "\\nDEBUG=0\"}"));
    assertEquals("a\\r\\n[SECRET]", d.apply("a\\r\\n" + KEY));
    assertEquals("col\\t[SECRET]", d.apply("col\\t" + KEY));
  }

  @Test
  void anAuthorizationHeaderOnAnEscapedLineIsASecret() {
    String basic = Base64.getEncoder().encodeToString("deploy:Tr0ub4dor&3".getBytes(StandardCharsets.UTF_8));
    assertEquals("HTTP/1.1 401\\nAuthorization: Basic [SECRET]\\nretrying",
        d.apply("HTTP/1.1 401\\nAuthorization: Basic " + basic + "\\nretrying"));
  }

  @Test
  void personalDataStartingAnEscapedLineIsTakenAndTheEscapeStays() {
    assertEquals("to:\\n[EMAIL]", d.apply("to:\\nalice@example.com"));
    assertEquals(List.of("bank_card"), d.findings("card:\\n4111 1111 1111 1111"));
    assertEquals(List.of("phone"), d.findings("call:\\n+44 20 7946 0958"));
  }

  @Test
  void aKeyAfterAnEscapedLineBreakIsStillMeasuredWhole() {
    String line = KEY_LINE;
    String key = "-----BEGIN " + "PRIVATE KEY-----\\n" + line.substring(0, 64) + "\\n" + line.substring(0, 40)
        + "\\n-----END " + "PRIVATE KEY-----";
    assertEquals("{\"private_key\":\"[SECRET]\\n\",\"x\":1}", d.apply("{\"private_key\":\"" + key + "\\n\",\"x\":1}"));
    // cut short: the escaped line break after its body stays, and the prose after it
    assertEquals("key:\\n[SECRET]\\n\\nthat is all",
        d.apply("key:\\n-----BEGIN " + "PRIVATE KEY-----\\n" + line.substring(0, 64) + "\\n\\nthat is all"));
  }

  @Test
  void escapesThatAreNoLineBreakStay() {
    String path = "C:\\new\\reports\\test-4111.txt and C:\\temp\\nightly";
    assertEquals(path, d.apply(path));
    assertEquals(List.of(), d.findings("see \\n and \\t in printf; \\\\n is a backslash and an n"));
  }

  /** Review t166: the value's span took the backslash and left its letter glued to the next word. */
  @Test
  void aCredentialsValueEndsBeforeAnEscapedLineBreak() {
    assertEquals("password=[SECRET]\\nnext line", d.apply("password=Abcdefg1\\nnext line"));
    assertEquals("{\"cfg\":\"DB_PASS=[SECRET]\\nHOST=db\"}", d.apply("{\"cfg\":\"DB_PASS=hunter2xy9\\nHOST=db\"}"));
  }

  /** Review t166: a key inside a JSON text inside a JSON text (an MCP tool's result) has its line breaks escaped twice. */
  @Test
  void aKeyEscapedTwiceIsMeasuredWhole() {
    String line = KEY_LINE;
    String key = "-----BEGIN " + "PRIVATE KEY-----\\\\n" + line.substring(0, 64) + "\\\\n" + line.substring(0, 40)
        + "\\\\n-----END " + "PRIVATE KEY-----";
    String text = "{\"text\":\"{\\\"private_key\\\":\\\"" + key + "\\\\n\\\"}\"}";
    assertEquals("{\"text\":\"{\\\"private_key\\\":\\\"[SECRET]\\\\n\\\"}\"}", d.apply(text));
  }

  /** An escaped key with an encrypted key's armor headers. */
  @Test
  void anEscapedEncryptedKeyLosesItsBody() {
    String line = KEY_LINE;
    String cut = "-----BEGIN RSA " + "PRIVATE KEY-----\\nProc-Type: 4,ENCRYPTED\\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89"
        + "\\n\\n" + line.substring(0, 64) + "\\n" + line.substring(0, 64);
    assertEquals("key: [SECRET]", d.apply("key: " + cut));
  }

  /** Review t168: a key made on Windows, its CRLFs escaped in a JSON text, was cut after its first line. */
  @Test
  void aKeyWithEscapedCrlfIsMeasuredWhole() {
    String line = KEY_LINE;
    String key = "-----BEGIN " + "PRIVATE KEY-----\\r\\n" + line.substring(0, 64) + "\\r\\n" + line.substring(0, 40)
        + "\\r\\n-----END " + "PRIVATE KEY-----";
    assertEquals("{\"k\":\"[SECRET]\\r\\n\"}", d.apply("{\"k\":\"" + key + "\\r\\n\"}"));
  }
}
