package ca.helu.pallas.runtime.cli;

import ca.helu.pallas.runtime.config.Environment;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import java.io.Console;
import java.util.List;
import org.slf4j.LoggerFactory;
import org.slf4j.helpers.SubstituteLoggerFactory;

/**
 * The log knobs of docs/configuration.md: PALLAS_LOG_LEVEL for Pallas' own loggers (default INFO);
 * PALLAS_ROOT_LOG_LEVEL for everything else (default: the less verbose of Pallas' level and INFO).
 * Chatty libraries stay at WARN unless the root level is set explicitly.
 */
final class Logging {
  static final List<String> PINNED =
      List.of(
          "io.undertow",
          "org.xnio",
          "org.jboss",
          "io.modelcontextprotocol",
          "dev.langchain4j",
          "reactor",
          "io.micrometer",
          "com.networknt");

  private Logging() {}

  /**
   * Logback's context once SLF4J has bound it. While another thread (Preload's first log line) is
   * still initialising SLF4J, it hands out a stand-in factory, and settings made on that would be
   * lost: wait for the real one (at most a few seconds).
   */
  private static Object loggerContext() {
    long deadline = System.nanoTime() + 5_000_000_000L;
    Object factory = LoggerFactory.getILoggerFactory();
    while (!(factory instanceof LoggerContext)
        && factory instanceof SubstituteLoggerFactory
        && System.nanoTime() < deadline) {
      Thread.onSpinWait();
      factory = LoggerFactory.getILoggerFactory();
    }
    return factory;
  }

  /** Whether stdout is a terminal (JDK 22+ has a console even when it is redirected). */
  static boolean onTerminal() {
    Console console = System.console();
    if (console == null) {
      return false;
    }
    try {
      return (Boolean) Console.class.getMethod("isTerminal").invoke(console);
    } catch (ReflectiveOperationException e) {
      return true; // before JDK 22 a console is a terminal
    }
  }

  private static void useText(LoggerContext context) {
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    if (!(root.getAppender("STDOUT") instanceof ConsoleAppender<ILoggingEvent> console)) {
      return;
    }
    PatternLayoutEncoder encoder = new PatternLayoutEncoder();
    encoder.setContext(context);
    encoder.setPattern(TEXT_PATTERN);
    encoder.start();
    console.stop();
    console.setEncoder(encoder);
    console.start();
  }

  /** How log lines look: {@code auto} is text on a terminal, JSON otherwise (containers). */
  enum Format {
    auto,
    json,
    text
  }

  /**
   * Short human lines for a terminal; MDC (agent, request_id) in brackets; a message bounded as in
   * JSON ({@link BoundedLogFields}).
   */
  static final String TEXT_PATTERN =
      "%d{HH:mm:ss.SSS} %-5level %replace([%X{agent} %X{request_id}] ){'^\\[ \\] $', ''}"
          + "%.-16384msg%n";

  static void configure(Environment env, Format format) {
    if (!(loggerContext() instanceof LoggerContext context)) {
      return;
    }
    if (format == Format.text || (format == Format.auto && onTerminal())) {
      useText(context);
    }
    Level pallas = Level.toLevel(env.get("PALLAS_LOG_LEVEL").orElse("INFO"), Level.INFO);
    var explicitRoot = env.get("PALLAS_ROOT_LOG_LEVEL");
    Level root =
        explicitRoot
            .map(v -> Level.toLevel(v, Level.INFO))
            .orElse(pallas.isGreaterOrEqual(Level.INFO) ? pallas : Level.INFO);
    context.getLogger(Logger.ROOT_LOGGER_NAME).setLevel(root);
    context.getLogger("ca.helu.pallas").setLevel(pallas);
    for (String name : PINNED) {
      // logback.xml pins them already; an explicit root level lets them follow it
      context.getLogger(name).setLevel(explicitRoot.isEmpty() ? Level.WARN : null);
    }
  }
}
