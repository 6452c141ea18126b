package io.otl.node.export;

import com.typesafe.config.Config;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;

/** Dataset export on the embedded default, an H2 file. */
class DatasetExportH2Test extends DatasetExportContract {
  @Override
  protected Config database() throws Exception {
    return TestDatabases.h2(Files.createTempDirectory("otl-export-db-"));
  }
}
