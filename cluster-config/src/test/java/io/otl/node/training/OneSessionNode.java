package io.otl.node.training;

import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import io.otl.node.testing.Await;
import io.otl.node.testing.Http;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * What the trigger tests stand on: a node on a new H2 journal whose agent {@code bot} has one
 * completed session, and whose coordinator the trajectory feed has started (its training view
 * answers), so a manual trigger has a pool to train on.
 */
final class OneSessionNode {
  static final String AGENT = "bot";

  private OneSessionNode() {}

  /** The node, started in {@code dir}; the caller closes it. */
  static TrainingNode start(Path dir) throws Exception {
    TrainingNode node = TrainingNode.start(TestDatabases.node(TestDatabases.h2(dir.resolve("data")), true));
    try {
      Http http = new Http(node.httpPort());
      node.dataCollector().record("s-1", AGENT,
              new SessionInput.Message("e1", null, "user", "hi", null, null),
              new SessionInput.Message("e2", null, "assistant", "hello", null, 100L),
              new SessionInput.Result("e3", null, "SUCCESS", null))
          .toCompletableFuture().get(60, TimeUnit.SECONDS);
      Await.until("the trajectory feed gives " + AGENT + " its coordinator",
          () -> http.get("/v1/training/" + AGENT).status(), status -> status == 200);
      return node;
    } catch (Exception | AssertionError e) {
      node.close();
      throw e;
    }
  }
}
