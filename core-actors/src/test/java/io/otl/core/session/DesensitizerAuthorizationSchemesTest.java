package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.Base64;
import org.junit.jupiter.api.Test;

/**
 * An {@code Authorization} header of another scheme than Bearer, as a tool's {@code curl -v} output or an
 * error text shows it: {@code Basic} (user:password in base64, read by anyone) and {@code Token} (Django
 * REST framework, GitHub's classic header) were journaled, answered and exported as sent, while a
 * Bearer token was taken (trial t159). Credentials are assembled at run time so that no key-shaped
 * literal sits in the source.
 */
class DesensitizerAuthorizationSchemesTest {
  private final Desensitizer d = Desensitizer.builtInScanner();

  private static String basic(String userPassword) {
    return Base64.getEncoder().encodeToString(userPassword.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void basicCredentialsAreASecret() {
    assertEquals("> Authorization: Basic [SECRET]\n> Accept: */*",
        d.apply("> Authorization: Basic " + basic("user:password") + "\n> Accept: */*"));
    assertEquals("{\"Authorization\": \"Basic [SECRET]\"}", d.apply("{\"Authorization\": \"Basic " + basic("admin:Hunter2") + "\"}"));
    assertEquals("authorization: basic [SECRET]", d.apply("authorization: basic " + basic("ci-bot:s3cr3t-pass")));
  }

  @Test
  void aHeaderInAJsonObjectIsTakenAsTheExportsFinalScanReadsIt() throws Exception {
    var json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(
        "{\"headers\":{\"Authorization\":\"Basic " + basic("user:password") + "\",\"proxy-authorization\":\"Token "
            + "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b\",\"authorization\":\"Bearer " + "abcdef0123456789abcdef\"}}");
    String out = d.apply(json).toString();
    assertEquals("{\"headers\":{\"Authorization\":\"Basic [SECRET]\",\"proxy-authorization\":\"Token [SECRET]\","
        + "\"authorization\":\"Bearer [SECRET]\"}}", out);
    assertEquals(java.util.List.of(), d.findings(out));
  }

  @Test
  void aTokenSchemesTokenIsASecret() {
    String token = "9944b09199c62bcf" + "9418ad846dd0e4bbdfc6ee4b";
    assertEquals("Authorization: Token [SECRET]", d.apply("Authorization: Token " + token));
  }

  @Test
  void wordsAfterTheHeaderNameStay() {
    assertEquals("Authorization: Basic authentication is off", d.apply("Authorization: Basic authentication is off"));
    assertEquals("Authorization: Token required", d.apply("Authorization: Token required"));
    // base64 that decodes to no user:password is no Basic credential
    assertEquals("Authorization: Basic " + basic("nothing here"), d.apply("Authorization: Basic " + basic("nothing here")));
  }
}
