package io.otl.persistence;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A journal of its own, as the docs and the "data folder in use" message suggest it
 * ({@code jdbc:h2:file:./data-2/journal}, no options). Trial t151: on such a URL the node recorded,
 * but every coordinator and model view failed with {@code journal lookup failed: Table
 * "EVENT_JOURNAL" not found (candidates are: "event_journal")}, and acknowledged events could be
 * lost to a kill -9 (no WRITE_DELAY=0).
 */
class OwnH2UrlTest {

  @Test
  void aPlainH2UrlGetsTheNodesOwnH2SettingsAndTheJournalLookupsWork() throws Exception {
    Path dir = Files.createTempDirectory("otl-own-h2-");
    JournalSettings settings = JournalSettings.fromConfig(ConfigFactory.parseMap(Map.of(
        "persistence", "h2", "db.url", "jdbc:h2:file:" + dir.resolve("journal"), "db.user", "",
        "db.password", "", "db.max-connections", 2)));
    JournalSchema.ensure(settings);
    JournalDirectory directory = new JournalDirectory(settings, Runnable::run);
    assertFalse(directory.exists("ModelVersion|ghost").toCompletableFuture().get(10, TimeUnit.SECONDS));
    String url = settings.url().toUpperCase(java.util.Locale.ROOT);
    assertTrue(url.contains(";DATABASE_TO_UPPER=FALSE"), settings.url());
    assertTrue(url.contains(";WRITE_DELAY=0"), settings.url());
  }

  @Test
  void anUpperCaseH2IsRefusedNamingTheKey() {
    IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
        () -> JournalSettings.fromConfig(ConfigFactory.parseMap(Map.of("persistence", "h2",
            "db.url", "jdbc:h2:file:./x;DATABASE_TO_UPPER=TRUE", "db.user", "", "db.password", "",
            "db.max-connections", 2))));
    assertTrue(e.getMessage().startsWith("agentscope.training.db.url"), e.getMessage());
    assertTrue(e.getMessage().contains("DATABASE_TO_UPPER=false"), e.getMessage());
  }
}
