package io.otl.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** Issue #14.4: client errors give at most one log line per kind per interval, with the count. */
class ClientErrorLogTest {
  private final ListAppender<ILoggingEvent> lines = new ListAppender<>();
  private final Logger logger = (Logger) LoggerFactory.getLogger(ClientErrorLog.class);

  @BeforeEach
  void capture() {
    lines.start();
    logger.addAppender(lines);
  }

  @AfterEach
  void release() {
    logger.detachAppender(lines);
  }

  @Test
  void aFloodOfOneKindGivesOneLinePerIntervalWithTheCount() {
    AtomicLong now = new AtomicLong(1_000_000_000_000L);
    ClientErrorLog log = new ClientErrorLog(Duration.ofSeconds(10), now::get);
    for (int i = 0; i < 100_000; i++) log.record("400 POST /v1/sessions/{id}/events");
    log.record("404 unmatched");
    assertEquals(2, lines.list.size(), "one line for each kind's first error");
    now.addAndGet(Duration.ofSeconds(10).toNanos());
    log.record("400 POST /v1/sessions/{id}/events");
    List<String> messages = lines.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    assertEquals(3, messages.size(), messages.toString());
    assertTrue(messages.get(2).contains("x 100000"), "the summary counts what was not logged: " + messages.get(2));
  }

  @Test
  void kindsAreBoundedSoInventedOnesShareALine() {
    AtomicLong now = new AtomicLong(0);
    ClientErrorLog log = new ClientErrorLog(Duration.ofSeconds(10), now::get);
    for (int i = 0; i < 10_000; i++) log.record("kind-" + i);
    assertTrue(lines.list.size() <= 257, lines.list.size() + " lines");
  }
}
