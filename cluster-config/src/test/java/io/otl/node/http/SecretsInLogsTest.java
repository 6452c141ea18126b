package io.otl.node.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.typesafe.config.ConfigFactory;
import io.otl.node.TrainingNode;
import io.otl.node.testing.RawHttp;
import io.otl.node.testing.TestDatabases;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Issue #14.4: pekko-http logged an unparsable Authorization header with its full value at WARN,
 * so a token with a space (or a header carrying an e-mail) landed in the log on every request.
 * Every line the node logs while serving malformed headers is captured: neither the token nor the
 * personal data sent in headers may appear, nor in any answer.
 */
class SecretsInLogsTest {
  private static final String TOKEN = "s3cret tok3n/with+space";
  private static final List<String> SECRETS = List.of("s3cret", "tok3n", "13812345678", "jane.doe@example.com",
      "110101199003071234");

  @Test
  void malformedAuthorizationHeadersNeverReachTheLog() throws Exception {
    ListAppender<ILoggingEvent> captured = new ListAppender<>();
    captured.start();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.addAppender(captured);
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of(
            "agentscope.training.auth.token", TOKEN, "agentscope.training.auth.protect-reads", true))
        .withFallback(TestDatabases.node(TestDatabases.h2(Files.createTempDirectory("otl-logs-")), true)))) {
      List<String> headers = List.of(
          "Authorization: Bearer " + TOKEN,
          "Authorization: Bearer s3cret/tok3n 13812345678",
          "Authorization: Bearer tök3n-ñ-s3cret",
          "Authorization: Basic jane.doe@example.com:s3cret",
          "Authorization: Bearer \"s3cret\"",
          "Authorization: s3cret tok3n",
          "Authorization: Bearer ,,, 110101199003071234",
          "Authorization: Digest username=\"jane.doe@example.com\", realm=",
          "Authorization: Bearer tok3n\tjane.doe@example.com",
          "Authorization: Bearer =s3cret= =tok3n=",
          "Cookie: session=s3cret; email=jane.doe@example.com; ;;",
          "If-Modified-Since: 13812345678 s3cret",
          "Content-Type: application/json; charset=\"s3cret",
          "Accept: jane.doe@example.com/13812345678;;q=s3cret");
      for (String h : headers) {
        for (String path : List.of("/v1/sessions/s1", "/metrics", "/v1/nothing")) {
          RawHttp.Answer a = RawHttp.exchange(node.httpPort(),
              "GET " + path + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + h, null, 10_000);
          assertTrue(a.status() >= 200 && a.status() < 500, h + " → " + a.head());
          for (String s : SECRETS) assertFalse(a.body().contains(s), "an answer echoed " + s + ": " + a.body());
        }
      }
      // Pekko logs through an actor: once this marker is through, every earlier line is too.
      node.system().classicSystem().log().warning("marker-after-bad-headers");
      long deadline = System.nanoTime() + 20_000_000_000L;
      while (lines(captured).stream().noneMatch(l -> l.contains("marker-after-bad-headers"))
          && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      List<String> lines = lines(captured);
      assertTrue(lines.stream().anyMatch(l -> l.contains("marker-after-bad-headers")), "log capture works");
      for (String line : lines) {
        for (String s : SECRETS) assertFalse(line.contains(s), "the log holds " + s + ": " + line);
      }
      assertEquals(0, lines.stream().filter(l -> l.toLowerCase().contains("illegal header")).count(), lines.toString());
    } finally {
      root.detachAppender(captured);
    }
  }

  /**
   * The journal's URL is in the start-up lines ("journal schema ready (POSTGRES at …)", "training node
   * up: journal …"). Only a {@code password=} parameter was masked: PostgreSQL's {@code sslpassword}
   * (the client key's password) was logged as written.
   */
  @Test
  void aSecretParameterOfTheJournalUrlNeverReachesTheLog() throws Exception {
    com.typesafe.config.Config pg = TestDatabases.postgres();
    String url = pg.getString("agentscope.training.db.url") + "&sslmode=disable&sslpassword=k3y-s3cret";
    ListAppender<ILoggingEvent> captured = new ListAppender<>();
    captured.start();
    Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    root.addAppender(captured);
    try (TrainingNode node = TrainingNode.start(ConfigFactory.parseMap(Map.of("agentscope.training.db.url", url))
        .withFallback(TestDatabases.node(pg, false)))) {
      List<String> lines = lines(captured);
      assertTrue(lines.stream().anyMatch(l -> l.contains("training node up") && l.contains("sslpassword=***")),
          "the start-up line names the URL, its secret masked: " + lines);
      for (String line : lines) assertFalse(line.contains("k3y-s3cret"), "the log holds the key's password: " + line);
    } finally {
      root.detachAppender(captured);
    }
  }

  static List<String> lines(ListAppender<ILoggingEvent> appender) {
    // Logback appends under the appender's own lock (AppenderBase.doAppend), not the list's.
    synchronized (appender) {
      List<String> out = new ArrayList<>();
      for (ILoggingEvent e : appender.list) {
        out.add(e.getFormattedMessage() + (e.getThrowableProxy() == null ? "" : " " + e.getThrowableProxy().getMessage()));
      }
      return out;
    }
  }
}
