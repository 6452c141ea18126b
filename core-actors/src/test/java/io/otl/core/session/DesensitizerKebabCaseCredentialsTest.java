package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/**
 * A credential's setting written in kebab case, as Spring Boot and HOCON files write it
 * ({@code spring.cloud.aws.credentials.secret-key=…}, MinIO's {@code secret-key}). {@code api-key},
 * {@code client-secret}, {@code db-password} and {@code auth-token} were taken, {@code secret-key},
 * {@code secret-access-key} and {@code aws-secret-access-key} were journaled, answered and exported
 * with their value raw, in text and as a JSON key (trial t159). Values are assembled at run time so
 * that no key-shaped literal sits in the source.
 */
class DesensitizerKebabCaseCredentialsTest {
  private final Desensitizer d = Desensitizer.builtInScanner();
  private static final String VALUE = "wJalrXUtnFEMI" + "/K7MDENG/bPxRfiCY" + "EXAMPLEKEY1";

  @Test
  void aKebabCaseSecretKeySettingIsTaken() throws Exception {
    assertEquals("secret-key=[SECRET]", d.apply("secret-key=" + VALUE));
    assertEquals("secret-key: [SECRET]", d.apply("secret-key: " + VALUE));
    assertEquals("cloud.aws.credentials.secret-key=[SECRET]", d.apply("cloud.aws.credentials.secret-key=" + VALUE));
    assertEquals("aws-secret-access-key = [SECRET]", d.apply("aws-secret-access-key = " + VALUE));
    assertEquals("secret-access-key: [SECRET]", d.apply("secret-access-key: " + VALUE));
    ObjectMapper json = new ObjectMapper();
    assertEquals("{\"secret-key\":\"[SECRET]\"}",
        d.apply(json.readTree("{\"secret-key\":\"" + VALUE + "\"}")).toString());
  }

  @Test
  void wordsAroundItStay() {
    assertEquals("rotate the secret-key: see the runbook", d.apply("rotate the secret-key: see the runbook"));
    assertEquals("secret-key=changeme", d.apply("secret-key=changeme"));
  }
}
