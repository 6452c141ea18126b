package io.otl.persistence;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** How the node reaches its journal: the URL it is given, adjusted only where the node must. */
class JournalSettingsTest {

  private static JournalSettings h2(String url) {
    return JournalSettings.fromConfig(ConfigFactory.parseMap(Map.of(
        "persistence", "h2", "db.url", url, "db.user", "", "db.password", "", "db.max-connections", 2)));
  }

  @Test
  void h2DoesNotCloseTheJournalBeforeTheNodeHasStopped() {
    // H2's own shutdown hook would close the database under the node's coordinated shutdown
    // ("Database is already closed" at the last writes); the node closes its pool itself.
    assertTrue(h2("").url().endsWith(";DB_CLOSE_ON_EXIT=FALSE"), h2("").url());
    assertTrue(h2("jdbc:h2:file:./x;WRITE_DELAY=0;DATABASE_TO_UPPER=false").url().endsWith(";DATABASE_TO_UPPER=false;DB_CLOSE_ON_EXIT=FALSE"));
  }

  @Test
  void aUrlThatSaysHowToCloseIsLeftAsItIs() {
    String own = "jdbc:h2:file:./x;db_close_on_exit=TRUE;DATABASE_TO_UPPER=false;WRITE_DELAY=0";
    assertEquals(own, h2(own).url());
    // H2 refuses DB_CLOSE_ON_EXIT=FALSE beside AUTO_SERVER=TRUE: its server owns the closing
    String served = "jdbc:h2:file:./x;AUTO_SERVER=TRUE;WRITE_DELAY=0;DATABASE_TO_UPPER=false";
    assertEquals(served, h2(served).url());
  }
}
