package io.otl.persistence;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A journal URL whose host does not resolve said only the driver's "The connection attempt failed."
 * (trial t175: OTL_DB_URL=jdbc:postgresql://nosuchhost.invalid:5432/db), and one written with a
 * user:password@ part, which the PostgreSQL driver takes for part of the host name, said the same. Both
 * now say what is wrong with the URL, never its password. No server is needed: the name does not resolve.
 */
class UnresolvableJournalHostTest {

  @Test
  void aHostThatDoesNotResolveIsNamed() {
    String message = refusal("jdbc:postgresql://nosuchhost.invalid:5432/otl?password=hunter2XYZ");
    assertTrue(message.contains("the host nosuchhost.invalid does not resolve"), message);
    assertTrue(message.contains("agentscope.training.db.url (or OTL_DB_URL)"), message);
    assertFalse(message.contains("hunter2XYZ"), message);
  }

  @Test
  void aUserAndPasswordInTheUrlAreNamedAsNotTakenThere() {
    String message = refusal("jdbc:postgresql://otl:hunter2XYZ@nosuchhost.invalid:5432/otl");
    assertTrue(message.contains("a user:password@ part, which the PostgreSQL driver does not take"), message);
    assertTrue(message.contains("OTL_DB_USER / OTL_DB_PASSWORD"), message);
    assertFalse(message.contains("hunter2XYZ"), message);
  }

  private static String refusal(String url) {
    JournalSettings settings = new JournalSettings(JournalSettings.Kind.POSTGRES, url, "postgres", "", 1);
    return assertThrows(JournalSchema.JournalUnavailableException.class, () -> JournalSchema.connect(settings))
        .getMessage();
  }
}
