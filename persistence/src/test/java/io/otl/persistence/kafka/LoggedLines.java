package io.otl.persistence.kafka;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.LoggerFactory;

/** What a class logs while a test runs: a logback appender attached until {@link #close()}. */
final class LoggedLines implements AutoCloseable {
  private final Logger logger;
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  LoggedLines(Class<?> of) {
    this(of.getName());
  }

  /** What the logger {@code name} and those below it log (pekko's, by package). */
  LoggedLines(String name) {
    logger = (Logger) LoggerFactory.getLogger(name);
    appender.start();
    logger.addAppender(appender);
  }

  /** Whether a line logged so far contains {@code text}. */
  boolean contain(String text) {
    return lines().stream().anyMatch(line -> line.contains(text));
  }

  /** The lines logged so far, formatted. */
  List<String> lines() {
    List<ILoggingEvent> events;
    synchronized (appender) { // logback appends under this lock, from the node's threads
      events = new ArrayList<>(appender.list);
    }
    return events.stream().map(ILoggingEvent::getFormattedMessage).toList();
  }

  @Override
  public void close() {
    logger.detachAppender(appender);
  }
}
