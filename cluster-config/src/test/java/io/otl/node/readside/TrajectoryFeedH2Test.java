package io.otl.node.readside;

import com.typesafe.config.Config;
import io.otl.node.testing.TestDatabases;
import io.otl.persistence.JournalSettings;
import java.nio.file.Files;

/** The trajectory feed on the embedded default, an H2 file. */
class TrajectoryFeedH2Test extends TrajectoryFeedContract {
  @Override
  protected Config database() throws Exception {
    return TestDatabases.h2(Files.createTempDirectory("otl-feed-"));
  }

  @Override
  protected void skipOrderings(JournalSettings journal, long next) {
    FeedTestSupport.execute(journal, "ALTER TABLE event_journal ALTER COLUMN ordering RESTART WITH " + next);
  }
}
