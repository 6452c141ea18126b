package io.otl.examples.embedded;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import io.otl.core.api.DataCollector;
import io.otl.core.api.ModelRouter;
import io.otl.core.model.ModelVersion;
import io.otl.core.session.AgentSession;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * An agent that embeds a training node in its own JVM (design §1 way 1, §7.3): no HTTP hop, the node
 * is a Pekko cluster member of the agent's process.
 *
 * <ul>
 *   <li>With {@code OTL_SEED_NODES} set it joins that running cluster (use the cluster's journal:
 *       {@code OTL_PERSISTENCE=postgres}, {@code OTL_DB_URL}, ...); its cluster port is
 *       {@code OTL_CLUSTER_PORT} or any free port.
 *   <li>Without, it forms a cluster of its own on the default journal (H2 under ./data).
 * </ul>
 *
 * The node's HTTP API and the Trinity simulator are off. The agent asks {@link ModelRouter} which
 * model serves each session (there is none until a version is registered or trained: it then keeps
 * its base model), records a few sessions through {@link DataCollector}, sends a retry to show
 * idempotency, rates a session late, reads a trajectory back, and leaves the cluster. A call whose
 * ask times out (a node recovering a loaded journal answers late) is retried a few times with a
 * short backoff, as a real agent would; a node that never answers still ends the run with an error.
 */
public final class EmbeddedAgent {
  static final String AGENT_ID = "support-bot";
  private static final Duration WAIT = Duration.ofSeconds(30);
  /** Tries of one call whose ask times out, and the first pause between them (doubling). */
  static final int ATTEMPTS = 4;
  private static final Duration BACKOFF = Duration.ofMillis(250);

  private EmbeddedAgent() {}

  public static void main(String[] args) {
    io.otl.node.CommonPool.sizeBeforeFirstUse();
    Result result;
    try {
      result = run(ConfigFactory.empty(), System.getenv(), System.out);
    } catch (RuntimeException e) {
      System.err.println("embedded-agent failed: " + e.getMessage());
      System.exit(1);
      return;
    }
    System.out.println("done: " + result);
  }

  /** What one run did. */
  public record Result(List<String> sessions, int accepted, int duplicates, Optional<String> modelVersion) {}

  /**
   * Starts a node with {@code overrides} over the example's settings, does the agent's work, stops the
   * node. Everything it does is printed to {@code out}.
   */
  public static Result run(Config overrides, Map<String, String> env, PrintStream out) {
    boolean joining = env.get("OTL_SEED_NODES") != null && !env.get("OTL_SEED_NODES").isBlank();
    Map<String, Object> settings = new HashMap<>();
    settings.put("agentscope.training.http.enabled", false);
    settings.put("agentscope.training.simulator.enabled", false);
    if (env.get("OTL_CLUSTER_PORT") == null) settings.put("pekko.remote.artery.canonical.port", 0);
    Config config = overrides.withFallback(ConfigFactory.parseMap(settings));

    if (joining) {
      out.println("[agent] starting an embedded training node that joins the cluster at " + env.get("OTL_SEED_NODES"));
      if (!"postgres".equals(env.get("OTL_PERSISTENCE")) && !config.hasPath("agentscope.training.persistence")) {
        out.println("[agent] WARNING: joining a cluster needs the cluster's journal; set OTL_PERSISTENCE=postgres "
            + "and OTL_DB_URL/OTL_DB_USER/OTL_DB_PASSWORD as the cluster nodes have them");
      }
    } else {
      out.println("[agent] starting an embedded training node that forms its own cluster (no OTL_SEED_NODES)");
    }
    long t0 = System.nanoTime();
    try (TrainingNode node = TrainingNode.start(config)) {
      out.printf("[agent] node up in %d ms at %s (HTTP off, simulator off)%n", (System.nanoTime() - t0) / 1_000_000,
          node.system().address());
      DataCollector collector = node.dataCollector();
      ModelRouter router = node.modelRouter();
      String run = UUID.randomUUID().toString().substring(0, 8);
      List<String> sessions = new ArrayList<>();
      int accepted = 0;
      int duplicates = 0;
      Optional<String> model = Optional.empty();
      String[][] conversations = {
          {"Where is my parcel 4711?", "It left the depot this morning and arrives today.", "SUCCESS"},
          {"Change my delivery address to 5 Main St, mail me at jo@example.com", "Done, confirmation sent.", "SUCCESS"},
          {"Can I return an opened item?", "Let me hand you over to a colleague.", "FAILURE"}};
      for (int i = 0; i < conversations.length; i++) {
        String sessionId = "demo-" + run + "-" + i;
        sessions.add(sessionId);
        model = route(router, sessionId, out);
        List<SessionInput> turn = List.of(
            new SessionInput.Start("start", null, "1.0.0", model.orElse("base"), Map.of("channel", "example")),
            new SessionInput.Message("u1", null, "user", conversations[i][0], null, null),
            new SessionInput.ToolCall("t1", null, "call-1", "lookup_order",
                JsonNodeFactory.instance.objectNode().put("query", conversations[i][0]),
                JsonNodeFactory.instance.objectNode().put("found", true), true, 42L),
            new SessionInput.Message("a1", null, "assistant", conversations[i][1], "chatcmpl-" + run + i, 850L),
            new SessionInput.Result("r1", null, conversations[i][2], "example run"));
        AgentSession.Recorded ack = call("recording " + sessionId, () -> collector.record(sessionId, AGENT_ID, turn), out);
        accepted += ack.accepted();
        out.printf("[agent] session %s: recorded %d events (sampled=%s)%n", sessionId, ack.accepted(), ack.sampled());
        // A retry of the same batch (say the agent timed out) is acknowledged, not stored twice.
        AgentSession.Recorded retry = call("resending " + sessionId, () -> collector.record(sessionId, AGENT_ID, turn), out);
        duplicates += retry.duplicates();
        out.printf("[agent] session %s: retry acknowledged as %d duplicates%n", sessionId, retry.duplicates());
      }
      // Users rate later: the reward is revised. A lukewarm 2 of 5 on a SUCCESS, so the revision shows
      // (a 5 would add +1 to the result's +1, and the reward is clipped at 1.00 either way).
      Optional<AgentSession.State> before = call("reading " + sessions.get(0),
          () -> collector.trajectory(sessions.get(0)), out);
      AgentSession.Recorded rating = call("rating " + sessions.get(0),
          () -> collector.feedback(sessions.get(0), AGENT_ID, "RATING", 2.0, "fb-" + run), out);
      accepted += rating.accepted();
      Optional<AgentSession.State> stored = call("reading " + sessions.get(0),
          () -> collector.trajectory(sessions.get(0)), out);
      stored.ifPresent(s -> out.printf("[agent] trajectory %s: status %s, %d messages, reward %.2f, quality %.2f%n",
          sessions.get(0), s.status(), s.messages().size(), s.reward(), s.qualityScore()));
      if (before.isPresent() && stored.isPresent()) {
        out.printf("[agent] a later RATING 2 revised the reward of %s from %.2f to %.2f%n",
            sessions.get(0), before.get().reward(), stored.get().reward());
      }
      Optional<AgentSession.State> redacted = call("reading " + sessions.get(1),
          () -> collector.trajectory(sessions.get(1)), out);
      redacted.ifPresent(s -> out.println("[agent] stored user text: " + s.messages().get(0).content()));
      out.println("[agent] leaving the cluster");
      return new Result(sessions, accepted, duplicates, model);
    } finally {
      out.println("[agent] node stopped");
    }
  }

  /** The version serving {@code sessionId}; empty (keep the base model) when the agent has none yet. */
  private static Optional<String> route(ModelRouter router, String sessionId, PrintStream out) {
    try {
      ModelVersion.RouteDecision d = call("routing " + sessionId, () -> router.route(AGENT_ID, sessionId), out);
      out.printf("[agent] session %s is served by model %s at %s%n", sessionId, d.version(), d.endpoint());
      return Optional.of(d.version());
    } catch (ModelRouter.NoVersionException e) {
      out.printf("[agent] no model version for %s yet (%s): serving session %s with the base model%n", AGENT_ID,
          e.getMessage(), sessionId);
      return Optional.empty();
    }
  }

  /**
   * Asks, and asks again when the ask times out: a node that has just started may still be
   * recovering a loaded journal and answer a few seconds late. Every call here is idempotent (event
   * and feedback ids dedupe a resent batch). Other failures are not retried; after {@link #ATTEMPTS}
   * timeouts the call fails, so an agent whose node never answers still stops with an error.
   */
  static <T> T call(String what, Supplier<CompletionStage<T>> ask, PrintStream out) {
    for (int attempt = 1; ; attempt++) {
      try {
        return await(ask.get());
      } catch (AskTimedOut e) {
        if (attempt == ATTEMPTS) {
          throw new IllegalStateException(what + ": no answer after " + ATTEMPTS + " tries: " + e.getMessage(), e);
        }
        long pause = BACKOFF.toMillis() << (attempt - 1);
        out.printf("[agent] %s timed out (the node may still be recovering its journal); retry %d of %d in %d ms%n",
            what, attempt, ATTEMPTS - 1, pause);
        try {
          Thread.sleep(pause);
        } catch (InterruptedException ie) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted", ie);
        }
      }
    }
  }

  /** An ask that got no answer within the node's ask-timeout: worth another try. */
  static final class AskTimedOut extends RuntimeException {
    AskTimedOut(Throwable cause) {
      super(cause.getMessage(), cause);
    }
  }

  /** Waits for a stage, rethrowing its own failure (not wrapped) so callers can catch it by type. */
  private static <T> T await(CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().get(WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause() instanceof CompletionException c && c.getCause() != null ? c.getCause() : e.getCause();
      if (cause instanceof RuntimeException r) throw r;
      // Pekko's AskTimeoutException is a TimeoutException: the entity did not answer in time.
      if (cause instanceof TimeoutException) throw new AskTimedOut(cause);
      throw new IllegalStateException(cause);
    } catch (TimeoutException e) {
      throw new IllegalStateException("no answer within " + WAIT.toSeconds() + " s (is the journal reachable?)", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
