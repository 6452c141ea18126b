package io.otl.node;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
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

  /**
   * A model server URL with user:password@ was logged at start-up ("serving backend=vllm-lora base model
   * v0=… at http://user:secret@…"), journaled as v0's endpoint and answered by GET …/route, which agents
   * read; the vLLM and gateway clients never sent it. Now start-up stops, naming the key instead.
   */
  @Test
  void credentialsInAModelServerUrlStopStartUpUnshown() {
    ConfigValidationException vllm = assertThrows(ConfigValidationException.class, () -> TrainingNode.start(
        ConfigFactory.parseMap(Map.of("agentscope.training.serving.backend", "vllm-lora",
                "agentscope.training.serving.vllm.url", "http://ops:vllm-s3cret@127.0.0.1:8000"))
            .withFallback(TestDatabases.node(ConfigFactory.empty(), false))));
    assertTrue(vllm.getMessage().contains("agentscope.training.serving.vllm.url: must not carry credentials"
        + " (user:password@…)"), vllm.getMessage());
    assertTrue(vllm.getMessage().contains("agentscope.training.serving.vllm.api-key"), vllm.getMessage());
    assertFalse(vllm.getMessage().contains("s3cret"), vllm.getMessage());
    ConfigValidationException base = assertThrows(ConfigValidationException.class, () -> TrainingNode.start(
        ConfigFactory.parseMap(Map.of("agentscope.model.base-url", "https://ops:base-s3cret@models.example:8443/v1",
                "agentscope.model.model-name", "qwen"))
            .withFallback(TestDatabases.node(ConfigFactory.empty(), false))));
    assertTrue(base.getMessage().contains("agentscope.model.base-url: must not carry credentials"), base.getMessage());
    assertTrue(base.getMessage().contains("agentscope.model.api-key"), base.getMessage());
    assertFalse(base.getMessage().contains("s3cret"), base.getMessage());
  }

  /**
   * Named operator tokens (auth.operators) must each name one operator: a token given twice, an empty
   * one, one equal to the shared token, or a name that is no plain name stops start-up, naming the keys
   * and never a token.
   */
  @Test
  void operatorTokensThatCannotNameOneOperatorStopStartUpUnshown() {
    String message = assertThrows(ConfigValidationException.class, () -> TrainingNode.start(
        ConfigFactory.parseString("agentscope.training.auth { token = sh4red-s3cret, operators {"
                + " alice = twin-s3cret, bob = twin-s3cret, carol = \"\", dave = sh4red-s3cret,"
                + " \"eve@example.com\" = eve-s3cret } }")
            .withFallback(TestDatabases.node(ConfigFactory.empty(), false)))).getMessage();
    String key = "agentscope.training.auth.operators.";
    assertTrue(message.contains(key + "bob: the same token as " + key + "alice")
        || message.contains(key + "alice: the same token as " + key + "bob"), message);
    assertTrue(message.contains(key + "carol: is empty"), message);
    assertTrue(message.contains(key + "dave: the same token as agentscope.training.auth.token"), message);
    assertTrue(message.contains("the operator name " + key + "eve@example.com must be 1-64 characters"), message);
    assertFalse(message.contains("s3cret"), message);
  }

  /**
   * OTL_HTTP_HOST (http.host) that does not resolve: Pekko's "Bind failed … UnresolvedAddressException",
   * after the journal was created, named no key (trial t47). Refused with the other settings now.
   */
  @Test
  void aListenHostThatDoesNotResolveNamesTheKey() {
    ConfigValidationException e = assertThrows(ConfigValidationException.class, () -> TrainingNode.start(
        ConfigFactory.parseMap(Map.of("agentscope.training.http.host", "no.such.host.invalid"))
            .withFallback(TestDatabases.node(ConfigFactory.empty(), false))));
    assertEquals(1, e.errors().size(), e.getMessage());
    assertTrue(e.getMessage().contains("agentscope.training.http.host = \"no.such.host.invalid\": must be"),
        e.getMessage());
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

  @Test
  void aPostgresSchemaThatDoesNotExistIsNamedWithHowToCreateIt() {
    TestDatabases.requirePostgres();
    // PostgreSQL's own words were "no schema has been selected to create in", naming no setting.
    String schema = "otl_missing_" + Long.toHexString(System.nanoTime());
    String url = TestDatabases.PG_URL + (TestDatabases.PG_URL.contains("?") ? "&" : "?") + "currentSchema=" + schema;
    RuntimeException e = assertThrows(RuntimeException.class, () -> TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.persistence", "postgres",
            "agentscope.training.db.url", url,
            "agentscope.training.db.user", TestDatabases.PG_USER))
        .withFallback(TestDatabases.node(ConfigFactory.empty(), false))));
    String m = String.valueOf(e.getMessage()) + (e.getCause() == null ? "" : " / " + e.getCause().getMessage());
    assertTrue(m.contains("the schema " + schema + " named by currentSchema="), m);
    assertTrue(m.contains("CREATE SCHEMA " + schema), m);
    assertTrue(m.contains("OTL_DB_URL"), m);
    // Trial t61: PostgreSQL's "Position: 28" came on a line of its own before the hint; one message now.
    String printed = Main.startFailure(e);
    assertTrue(printed.lines().count() == 1 && !printed.contains("Position"), printed);
    assertTrue(printed.contains("the schema " + schema + " named by currentSchema="), printed);
  }

  /**
   * Trial t82: a database holding Akka/Pekko persistence-jdbc's legacy snapshot table started a node
   * that answered /health/ready UP and every session 503 ("column snapshot_ser_id does not exist").
   */
  @Test
  void aTableOfAnotherLayoutStopsStartUpInOneLineWithTheFix() throws Exception {
    Config db = TestDatabases.postgres();
    try (java.sql.Connection c = java.sql.DriverManager.getConnection(db.getString("agentscope.training.db.url"),
        TestDatabases.PG_USER, TestDatabases.PG_PASSWORD); java.sql.Statement st = c.createStatement()) {
      st.execute("CREATE TABLE snapshot (persistence_id VARCHAR(255) NOT NULL, sequence_number BIGINT NOT NULL, "
          + "created BIGINT NOT NULL, snapshot BYTEA NOT NULL, PRIMARY KEY (persistence_id, sequence_number))");
    }
    RuntimeException e = assertThrows(RuntimeException.class, () -> TrainingNode.start(
        TestDatabases.node(db, false)));
    String printed = Main.startFailure(e);
    assertTrue(printed.lines().count() == 1, printed);
    assertTrue(printed.contains("table snapshot has no column snapshot_ser_id") && printed.contains("currentSchema="),
        printed);
  }

  @Test
  void aFailureWithoutAMessageIsNamedNotPrintedAsNull() {
    // What `java -jar otl-node.jar` printed for such a failure: "the node could not start: null".
    assertEquals("java.lang.IllegalStateException (without a message)",
        Main.startFailure(new IllegalStateException()));
    assertEquals("journal down", Main.startFailure(new RuntimeException(null, new RuntimeException("journal down"))));
    assertEquals("port taken", Main.startFailure(new RuntimeException("port taken")));
    assertFalse(Main.jvmStopping(), "a running JVM is not stopping");
  }

  /**
   * Scala code throws checked exceptions undeclared (pekko's Await of the cluster port's bind throws
   * TimeoutException): such a failure passed Main's catch of RuntimeException and the user saw a stack trace.
   * Every start failure is the one line now (the failure injected: nobody fails a start on purpose).
   */
  @Test
  void aCheckedExceptionThrownUndeclaredIsTheOneLineToo() {
    java.util.Optional<String> line = Main.runNode(() -> {
      throw StartupFailureTest.<RuntimeException>undeclared(
          new java.util.concurrent.TimeoutException("Future timed out after [3 seconds]"));
    });
    assertEquals(java.util.Optional.of("the node could not start: Future timed out after [3 seconds]"), line);
  }

  /** Throws {@code t} as Scala code does a checked exception: without declaring it. */
  @SuppressWarnings("unchecked")
  private static <E extends Throwable> RuntimeException undeclared(Throwable t) throws E {
    throw (E) t;
  }
}
