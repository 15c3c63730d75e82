package dev.paddock.cli.logging;

import java.time.Instant;
import java.util.List;
import org.slf4j.Marker;
import org.slf4j.event.KeyValuePair;
import org.slf4j.event.Level;
import org.slf4j.event.LoggingEvent;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.spi.LoggingEventAware;

/**
 * Writes each event at or above {@link PaddockLogging#level()} as one line (see {@link LogFormat})
 * to the current {@code System.err}. Key-value pairs of the fluent API become fields.
 */
final class LineLogger extends LegacyAbstractLogger implements LoggingEventAware {
  private static final long serialVersionUID = 1L;

  /**
   * The JDK's own loggers, which at DEBUG write request lines with their query strings
   * (com.sun.net.httpserver) and command lines (java.lang.ProcessBuilder): never below INFO, so
   * that no key in a URL or a command reaches the log whatever PADDOCK_LOG_LEVEL says.
   */
  private static final List<String> JDK_PREFIXES =
      List.of("java.", "javax.", "jdk.", "sun.", "com.sun.");

  private final Level floor;

  LineLogger(String name) {
    this.name = name;
    this.floor = JDK_PREFIXES.stream().anyMatch(name::startsWith) ? Level.INFO : Level.TRACE;
  }

  private boolean enabled(Level level) {
    return level.toInt() >= Math.max(floor.toInt(), PaddockLogging.level().toInt());
  }

  @Override
  public boolean isTraceEnabled() {
    return enabled(Level.TRACE);
  }

  @Override
  public boolean isDebugEnabled() {
    return enabled(Level.DEBUG);
  }

  @Override
  public boolean isInfoEnabled() {
    return enabled(Level.INFO);
  }

  @Override
  public boolean isWarnEnabled() {
    return enabled(Level.WARN);
  }

  @Override
  public boolean isErrorEnabled() {
    return enabled(Level.ERROR);
  }

  @Override
  protected String getFullyQualifiedCallerName() {
    return null;
  }

  @Override
  protected void handleNormalizedLoggingCall(
      Level level, Marker marker, String message, Object[] arguments, Throwable throwable) {
    write(level, MessageFormatter.basicArrayFormat(message, arguments), List.of(), throwable);
  }

  /** The fluent API's events ({@code LOG.atInfo().addKeyValue(...)}), fields kept apart. */
  @Override
  public void log(LoggingEvent event) {
    if (!enabled(event.getLevel())) {
      return;
    }
    Object[] arguments =
        event.getArgumentArray() == null ? new Object[0] : event.getArgumentArray();
    List<KeyValuePair> fields =
        event.getKeyValuePairs() == null ? List.of() : event.getKeyValuePairs();
    write(
        event.getLevel(),
        MessageFormatter.basicArrayFormat(event.getMessage(), arguments),
        fields,
        event.getThrowable());
  }

  private void write(Level level, String message, List<KeyValuePair> fields, Throwable thrown) {
    String line =
        PaddockLogging.format()
            .line(
                Instant.now(),
                level,
                name,
                Thread.currentThread().getName(),
                message,
                fields,
                thrown);
    System.err.print(line);
  }
}
