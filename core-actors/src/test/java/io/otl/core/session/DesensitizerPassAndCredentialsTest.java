package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/**
 * Credential settings whose name ends in {@code PASS} ({@code DB_PASS}, {@code smtp_pass}, {@code MYSQL_ROOT_PASS},
 * a bare {@code PASS}) or is {@code credential(s)}: their values were journaled, answered and exported as sent
 * (trial t162), while {@code password=} and {@code secret-key=} were taken.
 */
class DesensitizerPassAndCredentialsTest {
  private final Desensitizer d = Desensitizer.builtInScanner();
  private final ObjectMapper json = new ObjectMapper();

  @Test
  void aSettingNamedPassIsTaken() throws Exception {
    assertEquals("DB_PASS=[SECRET]", d.apply("DB_PASS=hunter2secret"));
    assertEquals("PASS=[SECRET]", d.apply("PASS=hunter2secret"));
    assertEquals("smtp_pass: [SECRET]", d.apply("smtp_pass: Xk9#mPq2vL"));
    assertEquals("export MYSQL_ROOT_PASS=[SECRET] && run", d.apply("export MYSQL_ROOT_PASS=s3cr3tRoot && run"));
    assertEquals("smtp-pass = \"[SECRET]\"", d.apply("smtp-pass = \"Summer2024!\""));
    assertEquals("{\"db_pass\":\"[SECRET]\"}", d.apply(json.readTree("{\"db_pass\":\"hunter2secret\"}")).toString());
    assertEquals("SSH_PASSPHRASE=[SECRET]", d.apply("SSH_PASSPHRASE=c0rrect-h0rse"));
    assertTrue(d.findings("REDIS_PASS=r3d1sPassw").contains("secret"));
  }

  @Test
  void passInProseAndTestResultsStays() throws Exception {
    for (String prose : new String[] {
        "pass=true", "pass: 3", "tests pass: 12/12", "pass: 0.953125", "pass: 100.0000%", "pass@1: 0.4523",
        "bypass=abc12345xyz", "compass: N45.123456", "the bypass: route 66 to the city", "passenger=Jane2024x",
        "overpass: 12345678a", "pass: 2024-12-07", "pass: 10:00:00.000", "pass_rate: 0.95123"}) {
      assertEquals(prose, d.apply(prose), prose);
    }
    assertEquals("{\"pass\":\"0.953125\"}", d.apply(json.readTree("{\"pass\":\"0.953125\"}")).toString());
    assertEquals("{\"pass\":12345678}", d.apply(json.readTree("{\"pass\":12345678}")).toString());
  }

  @Test
  void aCredentialSettingIsTaken() throws Exception {
    assertEquals("credentials: [SECRET]", d.apply("credentials: admin:Pa55w0rd"));
    assertEquals("credential=[SECRET]", d.apply("credential=c2VjcmV0MTIzNDU2"));
    assertEquals("AWS_CREDENTIALS=[SECRET]", d.apply("AWS_CREDENTIALS=wJalrXUtnFEMI7K7MDENG"));
    assertEquals("{\"credentials\":\"[SECRET]\"}",
        d.apply(json.readTree("{\"credentials\":\"svc:8f2Kd9sLq\"}")).toString());
  }

  @Test
  void credentialsInProseStay() {
    for (String prose : new String[] {
        "credentials: none", "credentials: see the vault", "Credentials: stored in 1Password",
        "credential=required", "the credentials are rotated every 90 days"}) {
      assertEquals(prose, d.apply(prose), prose);
    }
  }

  /** Review t166: test runners' verdicts are no password; a quoted key still is. */
  @Test
  void aTestRunnersPassStays() {
    assertEquals("--- PASS: TestSHA256x1 (0.00s)", d.apply("--- PASS: TestSHA256x1 (0.00s)"));
    assertEquals("PASS: t/test01.sh", d.apply("PASS: t/test01.sh"));
    assertEquals("PASS: test-suite-01", d.apply("PASS: test-suite-01"));
    assertEquals("{\"pass\": \"[SECRET]\"}", d.apply("{\"pass\": \"hunter2secret\"}"));
    // review t168: a config's pass (YAML, nodemailer) is a password, and a key after PASS: is still taken
    assertEquals("auth: { user: 'a', pass: '[SECRET]' }", d.apply("auth: { user: 'a', pass: 'Hunter2secret' }"));
    assertEquals("pass: [SECRET]", d.apply("pass: hunter2secret9"));
    String ghp = "ghp_" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7c";
    assertEquals("PASS: [SECRET]", d.apply("PASS: " + ghp));
  }

  /**
   * Review t166: each nested candidate searched the rest of the text again, so 64 KB of "pass:" took seconds and
   * overflowed the stack, which stores the whole text as [SECRET]. It holds no credential and stays.
   */
  @Test
  void repeatedSettingNamesStayAsSent() {
    for (String name : new String[] {"pass:", "password:", "api_key=", "credentials:", "x_token="}) {
      String text = name.repeat(65_536 / name.length());
      assertEquals(text, d.apply(text), name);
    }
  }
}
