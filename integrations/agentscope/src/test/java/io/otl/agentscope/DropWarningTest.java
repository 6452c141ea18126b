package io.otl.agentscope;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.otl.core.session.SessionInput;
import io.otl.node.TrainingNode;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A drop's warning says why, in one line without the events: the buffer was full, the node refused
 * the batch (its status and reason), or the node could not be reached. It said "node answered 400".
 */
class DropWarningTest {
  private static final String SECRET_TEXT = "my parcel number is 4711";
  private final ListAppender<ILoggingEvent> logged = new ListAppender<>();
  private final Logger logger = (Logger) LoggerFactory.getLogger(AsyncSender.class);

  @BeforeEach
  void capture() {
    logged.start();
    logger.addAppender(logged);
  }

  @AfterEach
  void release() {
    logger.detachAppender(logged);
  }

  private static AsyncSender.Batch batch(String sessionId, String role) {
    return new AsyncSender.Batch(sessionId, "support-bot",
        List.of(new SessionInput.Message("as-msg-" + role, null, role, SECRET_TEXT, null, null)));
  }

  private String onlyWarning() {
    List<String> warnings = logged.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    assertEquals(1, warnings.size(), warnings.toString());
    String w = warnings.get(0);
    assertFalse(w.contains("\n"), "one line: " + w);
    assertFalse(w.contains(SECRET_TEXT) || w.contains("4711"), "no payload: " + w);
    return w;
  }

  @Test
  void aFullBufferIsNamed() throws Exception {
    try (AsyncSender sender = new AsyncSender((s, a, e) -> new CompletableFuture<>(), 1, 1, Duration.ZERO)) {
      sender.offer(batch("s-full", "user"));
      // The worker may have taken the first one: offer until one is refused.
      for (int i = 0; i < 3 && sender.dropped() == 0; i++) sender.offer(batch("s-full", "user"));
      assertEquals("dropped 1 events of session s-full: the hook's buffer of 1 batches is full (the node is slow or "
          + "unreachable; bufferCapacity raises it) (dropped so far: 1)", onlyWarning());
    }
  }

  @Test
  void aRefusalNamesTheNodesStatusAndReason() throws Exception {
    try (TrainingNode node = TestNode.start(TestNode.dir("agentscope-drop"));
        AsyncSender sender = new AsyncSender(TrajectorySink.http("http://127.0.0.1:" + node.httpPort()), 8, 3,
            Duration.ofMillis(10))) {
      sender.offer(batch("s-refused", "narrator"));
      assertTrue(sender.flush(Duration.ofSeconds(30)));
      String w = onlyWarning();
      assertTrue(w.startsWith("dropped 1 events of session s-refused after 1 attempt(s): the node refused them with "
          + "400 invalid_request: "), w);
      assertTrue(w.contains("role"), "the node's reason names the field: " + w);
    }
  }

  @Test
  void anUnreachableNodeIsNamed() throws Exception {
    int closed;
    try (ServerSocket s = new ServerSocket(0)) {
      closed = s.getLocalPort();
    }
    try (AsyncSender sender = new AsyncSender(TrajectorySink.http("http://127.0.0.1:" + closed, "tok-secret"), 8, 2,
        Duration.ofMillis(10))) {
      sender.offer(batch("s-down", "user"));
      assertTrue(sender.flush(Duration.ofSeconds(30)));
      String w = onlyWarning();
      assertEquals("dropped 1 events of session s-down after 2 attempt(s): node unreachable at 127.0.0.1:" + closed
          + " (ConnectException) (dropped so far: 1)", w);
    }
  }

  @Test
  void aNodeThatTakesTheConnectionAndNeverAnswersIsNamedSo() throws Exception {
    // It read "node unreachable at …:p (HttpTimeoutException)": the user looked for a dead node or a wrong port.
    try (ServerSocket silent = new ServerSocket(0);
        AsyncSender sender = new AsyncSender(TrajectorySink.http("http://127.0.0.1:" + silent.getLocalPort()), 8, 1,
            Duration.ZERO)) {
      sender.offer(batch("s-silent", "user"));
      assertTrue(sender.flush(Duration.ofSeconds(30)));
      assertEquals("dropped 1 events of session s-silent after 1 attempt(s): no answer from the node at 127.0.0.1:"
          + silent.getLocalPort() + " within 5 s (dropped so far: 1)", onlyWarning());
    }
  }
}
