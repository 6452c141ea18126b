package io.otl.node;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.filter.Filter;
import ch.qos.logback.core.spi.FilterReply;

/**
 * Drops Pekko's "Bind failed" ERROR (with its 27-line stack trace) from the jar's console: every
 * listener of the node binds while it starts, and a failed bind stops the start with one line that
 * names the port and the variable that moves it ({@link ListenerBind}). The user saw the wall first.
 */
public final class BindFailureLogFilter extends Filter<ILoggingEvent> {
  @Override
  public FilterReply decide(ILoggingEvent event) {
    return "org.apache.pekko.io.TcpListener".equals(event.getLoggerName())
        && event.getFormattedMessage() != null && event.getFormattedMessage().startsWith("Bind failed")
        ? FilterReply.DENY : FilterReply.NEUTRAL;
  }
}
