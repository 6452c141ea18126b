package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/**
 * A PEM private key (a tool's {@code cat ~/.ssh/id_rsa}, a service account's JSON, a pasted TLS key) was
 * journaled, answered and exported whole: no rule named it, and its base64 body holds no prefix the other
 * formats look for (trial t159). The block is assembled at run time so that no key-shaped literal sits in
 * the source.
 */
class DesensitizerPrivateKeyTest {
  private final Desensitizer d = Desensitizer.builtInScanner();
  private static final String BODY = "MIIEpAIBAAKCAQEA" + "3Tz2mr7SZiAMfQyuvBjM" + "\n" + "Kq8Ab2Cd4Ef6Gh8Ij0Kl" + "/+Mn=";

  private static String pem(String kind) {
    return "-----BEGIN " + kind + "-----\n" + BODY + "\n-----END " + kind + "-----";
  }

  @Test
  void aPemPrivateKeyIsASecretWhole() {
    for (String kind : new String[] {"RSA PRIVATE KEY", "PRIVATE KEY", "EC PRIVATE KEY", "OPENSSH PRIVATE KEY",
        "ENCRYPTED PRIVATE KEY", "PGP PRIVATE KEY BLOCK"}) {
      assertEquals("key:\n[SECRET]\ndone", d.apply("key:\n" + pem(kind) + "\ndone"), kind);
    }
  }

  @Test
  void anEncryptedKeysHeadersAndACutBlockAreTaken() {
    String legacy = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n"
        + BODY + "\n-----END RSA PRIVATE KEY-----";
    assertEquals("[SECRET]", d.apply(legacy));
    // cut by max-text-length, or pasted in part: the body up to the end of its base64 is taken
    assertEquals("[SECRET]", d.apply("-----BEGIN PRIVATE KEY-----\n" + BODY));
  }

  @Test
  void aKeyInAServiceAccountsJsonIsTaken() throws Exception {
    String escaped = pem("PRIVATE KEY").replace("\n", "\\n");
    assertEquals("{\"private_key\": \"[SECRET]\\n\"}", d.apply("{\"private_key\": \"" + escaped + "\\n\"}"));
    var json = new ObjectMapper().readTree("{\"private_key\":\"" + escaped + "\\n\"}");
    assertEquals("{\"private_key\":\"[SECRET]\\n\"}", d.apply(json).toString());
    assertTrue(d.findings(pem("EC PRIVATE KEY")).contains("secret"));
  }

  @Test
  void publicKeysAndCertificatesStay() {
    String cert = "-----BEGIN CERTIFICATE-----\n" + BODY + "\n-----END CERTIFICATE-----";
    assertEquals(cert, d.apply(cert));
    String pub = "-----BEGIN PUBLIC KEY-----\n" + BODY + "\n-----END PUBLIC KEY-----";
    assertEquals(pub, d.apply(pub));
    assertEquals("the PRIVATE KEY----- line ends it", d.apply("the PRIVATE KEY----- line ends it"));
  }

  /** Review t160: a header without a key's body (code, prose) is no key; it became [SECRET] and refused exports. */
  @Test
  void aHeaderWithoutAKeysBodyStays() {
    for (String text : new String[] {
        "if pem.startswith(\"-----BEGIN RSA PRIVATE KEY-----\"):",
        "starts with -----BEGIN PRIVATE KEY----- and ends with -----END PRIVATE KEY-----.",
        "-----BEGIN PRIVATE KEY-----\n"}) {
      assertEquals(text, d.apply(text));
      assertTrue(d.findings(text).isEmpty(), text);
    }
  }

  /** A key's line of 64 base64 characters, built at run time. */
  private static String line(int k) {
    StringBuilder b = new StringBuilder();
    while (b.length() < 64) b.append("Qk").append(k).append("x7Zp+/Rt");
    return b.substring(0, 64);
  }

  /**
   * Review t160: a traditional encrypted key's Proc-Type and DEK-Info lines (':', ',' and '-') and a PGP key's
   * armor headers ("Comment: Alice <alice@…>") stopped the rule: cut short, or with its END line after a
   * Comment, the key's body was stored raw. The whole key goes, the text around it stays.
   */
  @Test
  void aKeysArmorHeadersDoNotStopTheRule() {
    String body = line(1) + "\n" + line(2) + "\n" + line(3);
    String rsa = "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n";
    String pgp = "-----BEGIN PGP PRIVATE KEY BLOCK-----\nVersion: GnuPG v2\nComment: Alice <alice@example.com>\n\n";
    for (String header : new String[] {rsa, pgp}) {
      // cut short in a log, and what the log says next
      String log = "log:\n" + header + body;
      assertEquals("log:\n[SECRET]\n\nthat is all it printed", d.apply(log + "\n\nthat is all it printed"));
      assertEquals("log:\n[SECRET]\n...truncated", d.apply("log:\n" + header + body + "\n...truncated"));
      assertEquals("[SECRET]", d.apply(header + line(4)));
      // whole
      String end = header.equals(rsa) ? "-----END RSA PRIVATE KEY-----" : "-----END PGP PRIVATE KEY BLOCK-----";
      assertEquals("key:\n[SECRET]\ndone", d.apply("key:\n" + header + body + "\n=Ab3d\n" + end + "\ndone"));
      // with CRLF line breaks, and JSON-escaped in a tool's output
      assertEquals("[SECRET]", d.apply((header + body + "\n" + end).replace("\n", "\r\n")));
      String json = (header + body + "\n" + end + "\n").replace("\n", "\\n");
      assertEquals("{\"key\": \"[SECRET]\\n\"}", d.apply("{\"key\": \"" + json + "\"}"));
    }
  }

  /** Prose after a key cut short keeps its words: only the lines of the key's base64 go. */
  @Test
  void proseAfterACutKeyStays() {
    String cut = "-----BEGIN PRIVATE KEY-----\n" + line(1) + "\n" + line(2);
    assertEquals("see [SECRET]\nthat's what I copied.", d.apply("see " + cut + "\nthat's what I copied."));
    assertEquals("see [SECRET]\n\nthanks", d.apply("see " + cut + "\n\nthanks"));
    assertEquals("see [SECRET]\nthat is all\nbye", d.apply("see " + cut + "\nthat is all\nbye"));
    assertEquals("[SECRET]\nthat is all", d.apply(cut + "\nKq8Ab2Cd=\nthat is all"), "a key's short last line goes");
    assertEquals("[SECRET] (cut)", d.apply("-----BEGIN PRIVATE KEY----- " + line(1) + " " + line(2) + " (cut)"));
  }

  /**
   * A JSON text inside a message (a tool's output, a config dumped as JSON) holds the key after an escaped
   * line break: "\n" before the header was read as a word's letter and the key was no finding.
   */
  @Test
  void aKeyAfterAnEscapedLineBreakIsTaken() {
    String escaped = pem("PRIVATE KEY").replace("\n", "\\n");
    assertEquals("{\"out\": \"config:\\n[SECRET]\\nok\"}", d.apply("{\"out\": \"config:\\n" + escaped + "\\nok\"}"));
  }

  /**
   * Review t160: the pattern's lazy body ran from every header to the end of the text when no END line
   * followed, about a second for 64 KB of repeated headers (docs/data-hardening.md has the figures). The
   * block is now found by one walk; these are the shapes that cost most before, with what they must give.
   */
  @Test
  void textsMadeOfHeadersGiveWhatTheyHold() {
    String header = "-----BEGIN RSA PRIVATE KEY-----\n";
    StringBuilder headers = new StringBuilder();
    StringBuilder keys = new StringBuilder();
    StringBuilder expected = new StringBuilder();
    StringBuilder encrypted = new StringBuilder();
    while (headers.length() < 65_536) headers.append(header);
    for (int k = 0; headers.length() > keys.length(); k++) {
      keys.append(header).append(line(k)).append('\n');
      expected.append("[SECRET]\n");
      encrypted.append(header).append("Proc-Type: 4,ENCRYPTED\n");
    }
    StringBuilder uncut = new StringBuilder(header);
    while (uncut.length() < 61_440) uncut.append(line(7)).append('\n');
    assertEquals(headers.toString(), d.apply(headers.toString()));
    assertTrue(d.findings(headers.toString()).isEmpty());
    assertEquals(encrypted.toString(), d.apply(encrypted.toString()), "headers without a body stay");
    assertEquals(expected.toString(), d.apply(keys.toString()), "each key goes on its own");
    assertEquals("[SECRET]\n", d.apply(uncut.toString()));
  }
}
