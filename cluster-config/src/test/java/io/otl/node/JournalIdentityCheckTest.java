package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.persistence.JournalIdentity;
import io.otl.persistence.JournalSettings;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The join-time rule of one journal per cluster (issue #22 item 1); the multi-JVM case is JournalIdentityClusterTest. */
class JournalIdentityCheckTest {
  private static final JournalSettings A = new JournalSettings(JournalSettings.Kind.POSTGRES,
      "jdbc:postgresql://db-a:5432/otl?password=hunter2", "otl", "hunter3", 2);
  private static final JournalSettings B = new JournalSettings(JournalSettings.Kind.POSTGRES,
      "jdbc:postgresql://db-b:5432/otl", "otl", "hunter3", 2);

  @Test
  void theSameJournalJoins() {
    JournalIdentity id = new JournalIdentity(UUID.randomUUID(), JournalIdentity.SCHEMA_VERSION);
    // Another URL for the same database (another host name) is still the same journal.
    assertEquals(Optional.empty(), JournalIdentityCheck.mismatch(JournalIdentityCheck.config(id, A),
        JournalIdentityCheck.config(id, B)));
  }

  @Test
  void anotherJournalIsRefusedNamingBothDatabasesWithoutPasswords() {
    Config cluster = JournalIdentityCheck.config(new JournalIdentity(UUID.randomUUID(), 1), A);
    Config self = JournalIdentityCheck.config(new JournalIdentity(UUID.randomUUID(), 1), B);
    String why = JournalIdentityCheck.mismatch(cluster, self).orElseThrow();
    assertTrue(why.contains("jdbc:postgresql://db-a:5432/otl") && why.contains("jdbc:postgresql://db-b:5432/otl"), why);
    assertTrue(why.contains("OTL_DB_URL"), why);
    assertFalse(why.contains("hunter"), why);
  }

  @Test
  void anotherSchemaVersionIsRefused() {
    UUID id = UUID.randomUUID();
    Config cluster = JournalIdentityCheck.config(new JournalIdentity(id, 1), A);
    Config self = ConfigFactory.parseMap(Map.of(JournalIdentityCheck.SCHEMA_VERSION, JournalIdentity.SCHEMA_VERSION + 1))
        .withFallback(JournalIdentityCheck.config(new JournalIdentity(id, 1), A));
    String why = JournalIdentityCheck.mismatch(cluster, self).orElseThrow();
    assertTrue(why.contains("schema version " + (JournalIdentity.SCHEMA_VERSION + 1))
        && why.contains("schema version " + JournalIdentity.SCHEMA_VERSION), why);
  }

  @Test
  void aSideWithoutAnIdentityIsNotJudged() {
    Config self = JournalIdentityCheck.config(new JournalIdentity(UUID.randomUUID(), 1), B);
    assertEquals(Optional.empty(), JournalIdentityCheck.mismatch(ConfigFactory.empty(), self));
    assertEquals(Optional.empty(), JournalIdentityCheck.mismatch(self, ConfigFactory.empty()));
  }

  @Test
  void theCheckerIsPluggedIntoTheNodesPekkoConfig() {
    // Layered over the modules' reference.conf as NodeConfig does: otl-node.conf refers to their keys.
    Config node = ConfigFactory.parseResources("otl-node.conf")
        .withFallback(ConfigFactory.defaultReference()).resolve();
    assertEquals(JournalIdentityCheck.class.getName(),
        node.getString("pekko.cluster.configuration-compatibility-check.checkers.otl-journal-identity"));
  }
}
