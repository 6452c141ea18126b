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
}
