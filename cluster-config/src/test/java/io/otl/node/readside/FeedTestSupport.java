package io.otl.node.readside;

import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.otl.core.api.DataCollector;
import io.otl.core.session.SessionInput;
import io.otl.persistence.JournalSchema;
import io.otl.persistence.JournalSettings;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Sessions written through the real DataCollector, and small journal helpers for read-side tests. */
public final class FeedTestSupport {
  private static final ObjectMapper JSON = new ObjectMapper();

  private FeedTestSupport() {}

  /**
   * A session of {@code agentId} with prompt {@code prompt}, one tool call, an assistant answer
   * {@code answer} with msgId {@code "chatcmpl-" + sessionId}, and (when {@code success} is not
   * null) a task result that completes it: SUCCESS gives a higher reward than FAILURE.
   */
  public static CompletionStage<?> session(
      DataCollector dc, String sessionId, String agentId, String prompt, String answer, Boolean success) {
    try {
      List<SessionInput> inputs = new ArrayList<>(List.of(
          new SessionInput.Start("start", null, "1.0", "v1", Map.of()),
          new SessionInput.Message("u1", null, "user", prompt, null, null),
          new SessionInput.ToolCall("t1", null, "call-1", "search", JSON.readTree("{\"q\":\"" + sessionId + "\"}"),
              JSON.readTree("{\"hits\":[1,2]}"), true, 30L),
          new SessionInput.Message("a1", null, "assistant", answer, "chatcmpl-" + sessionId, 400L)));
      if (success != null) inputs.add(new SessionInput.Result("res", null, success ? "SUCCESS" : "FAILURE", "r"));
      return dc.record(sessionId, agentId, inputs);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** Writes completed sessions {@code prefix-0 … prefix-(n-1)}, at most 32 in flight. */
  public static List<String> completedSessions(DataCollector dc, String prefix, String agentId, int n) throws Exception {
    List<String> ids = new ArrayList<>();
    List<CompletableFuture<?>> inFlight = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      String id = prefix + "-" + i;
      ids.add(id);
      inFlight.add(session(dc, id, agentId, "question " + i, "answer " + i, i % 3 != 1).toCompletableFuture());
      if (inFlight.size() == 32) {
        CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        inFlight.clear();
      }
    }
    CompletableFuture.allOf(inFlight.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
    return ids;
  }

  public static void await(String what, Duration timeout, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) fail("timed out after " + timeout + " waiting for " + what);
      Thread.sleep(50);
    }
  }

  public static long queryLong(JournalSettings journal, String sql) {
    try (Connection c = JournalSchema.connect(journal); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    } catch (Exception e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
  }

  public static void execute(JournalSettings journal, String... sql) {
    try (Connection c = JournalSchema.connect(journal); Statement st = c.createStatement()) {
      for (String s : sql) st.execute(s);
    } catch (Exception e) {
      throw new IllegalStateException(String.join("; ", sql) + ": " + e.getMessage(), e);
    }
  }
}
