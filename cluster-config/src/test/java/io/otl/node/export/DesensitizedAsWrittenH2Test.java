package io.otl.node.export;

import com.typesafe.config.Config;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;

/** Desensitizing as written on the embedded default, an H2 file. */
class DesensitizedAsWrittenH2Test extends DesensitizedAsWrittenContract {
  @Override
  protected Config database() throws Exception {
    return TestDatabases.h2(Files.createTempDirectory("otl-export-db-"));
  }
}
