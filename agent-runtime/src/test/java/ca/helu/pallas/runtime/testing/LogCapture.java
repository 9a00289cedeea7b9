package ca.helu.pallas.runtime.testing;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.core.read.ListAppender;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.LoggerFactory;

/**
 * Every line the process logs while it is open, DEBUG included (the root level is lowered for that
 * time): for tests that a secret is never logged, at any level.
 */
public final class LogCapture implements AutoCloseable {
  /** Loggers the runtime sets a level on (cli.LogbackSetup), lowered to DEBUG for the capture. */
  private static final List<String> LOGGERS =
      List.of(
          org.slf4j.Logger.ROOT_LOGGER_NAME,
          "ca.helu.pallas",
          "io.modelcontextprotocol",
          "com.nimbusds",
          "io.undertow");

  private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
  private final Map<Logger, Level> levels = new LinkedHashMap<>();
  private final ListAppender<ILoggingEvent> lines = new ListAppender<>();

  public LogCapture() {
    lines.start();
    root.addAppender(lines);
    for (String name : LOGGERS) {
      Logger logger = (Logger) LoggerFactory.getLogger(name);
      levels.put(logger, logger.getLevel());
      logger.setLevel(Level.DEBUG);
    }
  }

  /** Each line as written: its message, its MDC and its exception's messages. */
  public List<String> lines() {
    return List.copyOf(lines.list).stream().map(LogCapture::text).toList();
  }

  /** The events themselves, for their logger, level and MDC. */
  public List<ILoggingEvent> events() {
    return List.copyOf(lines.list);
  }

  private static String text(ILoggingEvent e) {
    StringBuilder text =
        new StringBuilder(e.getLoggerName()).append(' ').append(e.getFormattedMessage());
    text.append(' ').append(e.getMDCPropertyMap());
    for (IThrowableProxy t = e.getThrowableProxy(); t != null; t = t.getCause()) {
      text.append(' ').append(t.getClassName()).append(": ").append(t.getMessage());
    }
    return text.toString();
  }

  @Override
  public void close() {
    levels.forEach(Logger::setLevel);
    root.detachAppender(lines);
  }
}
