package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.ConfigFactory;
import io.otl.node.config.ConfigValidationException;
import io.otl.node.testing.TestDatabases;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Start-up fails fast, names the setting to fix, and never prints a password. */
class StartupFailureTest {

  @Test
  void anUnreachableDatabaseNamesTheUrlSetting() {
    RuntimeException e = assertThrows(RuntimeException.class, () -> TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.persistence", "postgres",
            "agentscope.training.db.url", "jdbc:postgresql://127.0.0.1:1/nowhere",
            "agentscope.training.db.password", "hunter2-secret"))
        .withFallback(TestDatabases.node(ConfigFactory.empty(), false))));
    assertTrue(e.getMessage().contains("agentscope.training.db.url"), e.getMessage());
    assertTrue(e.getMessage().contains("OTL_DB_URL"), e.getMessage());
    assertFalse(e.getMessage().contains("hunter2-secret"), e.getMessage());
  }

  @Test
  void aWrongValueNamesTheKeyTheValueAndWhatIsAllowed() {
    ConfigValidationException e = assertThrows(ConfigValidationException.class, () -> TrainingNode.start(
        ConfigFactory.parseMap(Map.of("agentscope.training.data-collector.sample-rate", 1.5,
                "agentscope.training.training-runner.algorithm", "magic"))
            .withFallback(TestDatabases.node(ConfigFactory.empty(), false))));
    assertTrue(e.getMessage().contains("agentscope.training.data-collector.sample-rate = 1.5"), e.getMessage());
    assertTrue(e.getMessage().contains("agentscope.training.training-runner.algorithm"), e.getMessage());
    assertTrue(e.getMessage().contains("sft"), e.getMessage());
  }

  @Test
  void aWrongPostgresPasswordNamesTheCredentialSettings() {
    TestDatabases.requirePostgres();
    // Trust authentication accepts any password locally; a user that does not exist is refused.
    RuntimeException e = assertThrows(RuntimeException.class, () -> TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.persistence", "postgres",
            "agentscope.training.db.url", TestDatabases.PG_URL,
            "agentscope.training.db.user", "no_such_user_otl"))
        .withFallback(TestDatabases.node(ConfigFactory.empty(), false))));
    assertTrue(e.getMessage().contains("no_such_user_otl"), e.getMessage());
    assertTrue(e.getMessage().contains("agentscope.training.db"), e.getMessage());
  }
}
