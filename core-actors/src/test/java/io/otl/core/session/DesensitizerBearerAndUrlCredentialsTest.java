package io.otl.core.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A trial sent an opaque bearer token ({@code Authorization: Bearer 9c1f…}, what a tool's curl -v
 * output or an error text holds) and passwords in URLs ({@code redis://:pw@cache:6379},
 * {@code postgres://app:pw@db.internal/app}) through every door: the token and the Redis password
 * were stored raw (journal, GET, exports, the job's dataset), the PostgreSQL one hidden only by
 * chance (its host has a dot, so "pw@db.internal" read as an e-mail). Both are the {@code secret}
 * rule's now. Secrets are assembled at run time so that no token-shaped literal sits in the source.
 */
class DesensitizerBearerAndUrlCredentialsTest {
  private static final Desensitizer DEFAULT = SessionSettings.fromConfig(
      ConfigFactory.load().getConfig("agentscope.training")).desensitizer();

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    "Authorization: Bearer 9c1f7e3a2b4d6f8091a2b3c4d5e6f708|Authorization: Bearer [SECRET]",
    "authorization: bearer 9c1f7e3a2b4d6f8091a2b3c4d5e6f708, next|authorization: bearer [SECRET], next",
    "-H 'Authorization: Bearer AbCdEfGh_1234-5678.xyz~+/Q=='|-H 'Authorization: Bearer [SECRET]'",
    "{\"Authorization\":\"Bearer tok_0a1b2c3d4e5f6a7b8c9d\"}|{\"Authorization\":\"Bearer [SECRET]\"}",
    "redis://:MyRedisPa55@cache:6379|redis://[SECRET]@cache:6379",
    "db postgres://admin:Hunter2Pass@db.internal:5432/app down|db postgres://[SECRET]@db.internal:5432/app down",
    "clone https://deploy:p4ss!w0rd#x@git.example.com/repo.git|clone https://[SECRET]@git.example.com/repo.git",
    "amqp://guest:gu@st@rabbit/vhost|amqp://[SECRET]@rabbit/vhost",
    "{\"url\":\"mongodb+srv://u:pw@c0.example.net\",\"to\":\"x\"}|{\"url\":\"mongodb+srv://[SECRET]@c0.example.net\",\"to\":\"x\"}",
    "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY|aws_secret_access_key = [SECRET]",
    "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY|export AWS_SECRET_ACCESS_KEY=[SECRET]",
    "{\"SecretAccessKey\": \"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\", \"x\": 1}|{\"SecretAccessKey\": \"[SECRET]\", \"x\": 1}",
    "DB_PASSWORD=Summer2024! and go|DB_PASSWORD=[SECRET] and go",
    "login with password: hunter2x9 please|login with password: [SECRET] please",
    "apiKey='AbCdEf0123456789'|apiKey='[SECRET]'",
    "client_secret: 9f8e7d6c5b4a|client_secret: [SECRET]",
    "aws_secret=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY|aws_secret=[SECRET]",
    "{\"jwt_secret_key\": \"s3cr3t-signing-value\"}|{\"jwt_secret_key\": \"[SECRET]\"}",
    "SECRET=9f8e7d6c5b4a3f2e|SECRET=[SECRET]",
  })
  void bearerTokensAndUrlPasswordsBecomeSecrets(String sent, String stored) {
    assertEquals(stored, DEFAULT.apply(sent));
    assertTrue(Desensitizer.builtInScanner().findings(sent).contains("secret"), "the export's final scan finds it");
  }

  @ParameterizedTest
  @ValueSource(strings = {
    "Bearer authentication is the default scheme",
    "the Bearer ExtraordinarilyLongWordWithoutDigits",
    "Bearer short123",
    "https://example.com:8443/path?q=1",
    "ftp://anonymous.user/x:y@z",
    "see http://localhost:8080/v1/chat/completions and https://a.example/x@y",
    "ratio 1:2 at 10:30 (http://h/a:b@c)",
    "the password: required for every account",
    "api_key=changeme",
    "password = ********",
    "a passwordless login: 12345678 steps",
    "the key: 12345678 is an order",
    "bypass: 20241202x",
    "the secret: 42 is the answer",
    "a secretary: 12345678 calls",
  })
  void wordsAndUrlsWithoutCredentialsStay(String text) {
    assertSame(text, DEFAULT.apply(text));
  }

  @Test
  void aCredentialValueInJsonIsReplacedWhole() throws Exception {
    var json = new com.fasterxml.jackson.databind.ObjectMapper().readTree(
        "{\"user\":\"bob\",\"password\":\"Summer2024!\",\"aws_secret_access_key\":\"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\","
            + "\"api_key\":\"changeme\",\"token_count\":\"12345\",\"nested\":{\"my_db_password\":\"p4ssw0rd\",\"password_hint\":\"pet2024x\",\"passwd\":\"p4ssw0rd99 x\"}}");
    assertEquals("{\"user\":\"bob\",\"password\":\"[SECRET]\",\"aws_secret_access_key\":\"[SECRET]\",\"api_key\":\"changeme\","
        + "\"token_count\":\"12345\",\"nested\":{\"my_db_password\":\"[SECRET]\",\"password_hint\":\"pet2024x\",\"passwd\":\"[SECRET] x\"}}", DEFAULT.apply(json).toString());
    assertEquals(List.of(), Desensitizer.builtInScanner().findings(DEFAULT.apply(json).toString()),
        "what ingestion stored passes the export's final scan");
    assertEquals(List.of("secret"), Desensitizer.builtInScanner().findings(json.toString()), "the raw tree does not");
    assertEquals(java.util.Map.of("password", "[SECRET]", "k", "v"),
        DEFAULT.apply(java.util.Map.of("password", "p4ssw0rd99", "k", "v")));
  }

  @Test
  void aListWithoutSecretLeavesThemAsSent() {
    String text = "redis://:MyRedisPa55@cache:6379 Bearer 9c1f7e3a2b4d6f8091a2b3c4d5e6f708";
    assertSame(text, new Desensitizer(true, List.of("phone", "id_card", "email"), List.of()).apply(text));
  }
}
