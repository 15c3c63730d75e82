package dev.paddock.cli.logging;

import org.slf4j.ILoggerFactory;
import org.slf4j.IMarkerFactory;
import org.slf4j.helpers.BasicMDCAdapter;
import org.slf4j.helpers.BasicMarkerFactory;
import org.slf4j.spi.MDCAdapter;
import org.slf4j.spi.SLF4JServiceProvider;

/**
 * Found by SLF4J through {@code META-INF/services}. Why our own and not Logback: two fixed line
 * formats with our field names and a level are all the control plane needs; this is four small
 * classes with no dependency and no configuration file, where Logback would add two jars, an XML
 * file and still a JSON encoder of ours for these field names.
 */
public final class PaddockLogProvider implements SLF4JServiceProvider {
  private ILoggerFactory loggers;
  private IMarkerFactory markers;
  private MDCAdapter mdc;

  /** For {@link java.util.ServiceLoader}. */
  public PaddockLogProvider() {}

  @Override
  public ILoggerFactory getLoggerFactory() {
    return loggers;
  }

  @Override
  public IMarkerFactory getMarkerFactory() {
    return markers;
  }

  @Override
  public MDCAdapter getMDCAdapter() {
    return mdc;
  }

  @Override
  public String getRequestedApiVersion() {
    return "2.0.99";
  }

  @Override
  public void initialize() {
    loggers = new LineLoggers();
    markers = new BasicMarkerFactory();
    mdc = new BasicMDCAdapter();
  }
}
