package io.otl.node;

import com.typesafe.config.Config;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;

/** The session journal contract on the embedded default, an H2 file. */
class SessionJournalH2Test extends SessionJournalContract {
  @Override
  protected Config database() throws Exception {
    return TestDatabases.h2(Files.createTempDirectory("otl-h2-"));
  }
}
