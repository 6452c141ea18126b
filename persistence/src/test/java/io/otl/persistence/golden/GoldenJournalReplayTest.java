package io.otl.persistence.golden;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.UUID;

/** The golden journals replayed on H2 (a fresh file per test under target/). */
class GoldenJournalReplayTest extends GoldenJournalReplayContract {
  @Override
  protected Config database() throws Exception {
    Path dir = Files.createDirectories(Path.of("target", "golden-replay", UUID.randomUUID().toString()));
    return ConfigFactory.parseMap(Map.of(
        "agentscope.training.persistence", "h2",
        "agentscope.training.db.url", "jdbc:h2:file:" + dir.resolve("journal").toAbsolutePath()
            + ";DATABASE_TO_UPPER=false;AUTO_SERVER=TRUE;WRITE_DELAY=0"));
  }
}
