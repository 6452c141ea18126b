package io.otl.node.testing;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import java.util.stream.Collectors;
import org.slf4j.LoggerFactory;

/** Collects what one logger writes during a test. */
public final class LogCapture implements AutoCloseable {

  private final Logger logger;
  private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

  public LogCapture(Class<?> source) {
    this(LoggerFactory.getLogger(source).getName());
  }

  private LogCapture(String name) {
    logger = (Logger) LoggerFactory.getLogger(name);
    appender.start();
    logger.addAppender(appender);
  }

  /** What every logger writes (the root's appenders see all of them). */
  public static LogCapture everything() {
    return new LogCapture(org.slf4j.Logger.ROOT_LOGGER_NAME);
  }

  /** Formatted messages with their level, e.g. "WARN agentscope.x: ...". */
  public List<String> lines() {
    // Logback appends under the appender's own lock (AppenderBase.doAppend): reading the list while
    // the node still logs threw ConcurrentModificationException.
    synchronized (appender) {
      return appender.list.stream()
          .map(e -> e.getLevel() + " " + e.getFormattedMessage())
          .collect(Collectors.toList());
    }
  }

  public List<String> lines(String level) {
    return lines().stream().filter(l -> l.startsWith(level + " ")).collect(Collectors.toList());
  }

  @Override
  public void close() {
    logger.detachAppender(appender);
    appender.stop();
  }
}
