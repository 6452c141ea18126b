package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The start-up warm-up of the journal recovers and writes nothing. */
class JournalWarmUpTest {
  @Test
  void theWarmUpRecoversWithoutWritingAnything() throws Exception {
    try (TrainingNode node = TrainingNode.start(TestDatabases.node(
        TestDatabases.h2(Files.createTempDirectory("otl-h2-")), false))) {
      // Completes normally: a failed recovery completes it exceptionally and get() throws.
      node.journalWarmUp().toCompletableFuture().get(60, TimeUnit.SECONDS);
      assertEquals(0, SessionJournalContract.journalRows(node, JournalWarmUp.PERSISTENCE_ID));
    }
  }
}
