package dev.paddock.bench;

import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * The TRACE lines of one Kubernetes start, from the three places that take part in it: the backend
 * ({@code paddock.backend.kubernetes}), the fake kubelet ({@code paddock.test.fake-kubelet}) and
 * the mock API server's dispatcher ({@code paddock.test.mock-api}), each stamped by the logging
 * system when it was written (microseconds, one clock: all three run in the bench's JVM). For
 * {@code KubernetesBench --trace}: a timeline per start and the intervals between its steps.
 */
final class StartTrace extends Handler implements AutoCloseable {
  private static final List<String> SOURCES =
      List.of("paddock.backend.kubernetes", "paddock.test.fake-kubelet", "paddock.test.mock-api");

  /** Held: a logger without a strong reference may be collected, and its level with it. */
  private final List<Logger> loggers = new ArrayList<>();

  private final ConcurrentLinkedQueue<Line> lines = new ConcurrentLinkedQueue<>();
  private final SimpleFormatter formatter = new SimpleFormatter();

  /** One line: when, who ({@code backend}, {@code kubelet}, {@code mock}), what. */
  record Line(Instant at, String source, String text) {}

  /** Turns the three loggers to TRACE and collects their lines from now on. */
  static StartTrace install() {
    StartTrace trace = new StartTrace();
    trace.setLevel(Level.ALL);
    for (String name : SOURCES) {
      Logger logger = Logger.getLogger(name);
      logger.setLevel(Level.FINER);
      logger.addHandler(trace);
      trace.loggers.add(logger);
    }
    return trace;
  }

  @Override
  public void publish(LogRecord record) {
    if (record.getLevel().intValue() > Level.FINER.intValue()) {
      return; // warnings reach the console through the parent handlers as before
    }
    String source =
        switch (record.getLoggerName()) {
          case "paddock.backend.kubernetes" -> "backend";
          case "paddock.test.fake-kubelet" -> "kubelet";
          default -> "mock";
        };
    lines.add(new Line(record.getInstant(), source, formatter.formatMessage(record)));
  }

  @Override
  public void flush() {}

  @Override
  public void close() {
    loggers.forEach(l -> l.removeHandler(this));
  }

  /** The lines written from {@code from} to {@code to}, in time order. */
  List<Line> between(Instant from, Instant to) {
    return lines.stream()
        .filter(l -> !l.at().isBefore(from) && !l.at().isAfter(to))
        .sorted(java.util.Comparator.comparing(Line::at))
        .toList();
  }

  /** The first of {@code lines} of {@code source} whose text starts with {@code prefix}. */
  static Optional<Line> first(List<Line> lines, String source, String prefix) {
    return lines.stream()
        .filter(l -> l.source().equals(source) && l.text().startsWith(prefix))
        .findFirst();
  }

  /** Milliseconds from {@code from} to {@code line}'s stamp. */
  static double millis(Instant from, Line line) {
    return Duration.between(from, line.at()).toNanos() / 1e6;
  }

  /** Prints {@code lines} as {@code +ms source text}, offsets from {@code from}. */
  static void print(PrintStream out, Instant from, List<Line> lines) {
    for (Line line : lines) {
      out.printf("  %+8.1f ms  %-7s %s%n", millis(from, line), line.source(), line.text());
    }
  }
}
