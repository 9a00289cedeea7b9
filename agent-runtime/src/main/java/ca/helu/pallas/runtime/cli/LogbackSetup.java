package ca.helu.pallas.runtime.cli;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;
import net.logstash.logback.encoder.LogstashEncoder;
import net.logstash.logback.fieldnames.LogstashFieldNames;

/**
 * The configuration of logback.xml, built in code when the runtime's command line runs: logback
 * otherwise parses the XML (a SAX parser and its model) on the way to an agent's readiness, tens of
 * milliseconds of CPU (docs/benchmarks.md, "Images: analysis"). Registered as a logback
 * Configurator service; anywhere else (tests, other programs with this jar on their class path, an
 * explicit {@code -Dlogback.configurationFile}) logback reads its files as usual. LogbackSetupTest
 * checks that both give the same loggers and the same JSON.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_HIGH_PRIORITY)
public final class LogbackSetup extends ContextAwareBase implements Configurator {
  private static volatile boolean enabled;

  /** Main calls this before anything logs. */
  static void enable() {
    enabled = true;
  }

  @Override
  public ExecutionStatus configure(LoggerContext context) {
    if (!enabled || System.getProperty("logback.configurationFile") != null) {
      return ExecutionStatus.INVOKE_NEXT_IF_ANY;
    }
    apply(context);
    return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
  }

  /** What logback.xml sets up: JSON lines on stdout, Pallas at INFO, chatty libraries at WARN. */
  static void apply(LoggerContext context) {
    LogstashFieldNames names = new LogstashFieldNames();
    names.setTimestamp("time");
    names.setVersion("[ignore]");
    names.setLevelValue("[ignore]");
    names.setLogger("logger");
    names.setThread("thread");
    LogstashEncoder encoder = new LogstashEncoder();
    encoder.setContext(context);
    encoder.setIncludeContext(false);
    encoder.setFieldNames(names);
    encoder.setJsonGeneratorDecorator(new BoundedLogFields());
    encoder.start();
    ConsoleAppender<ILoggingEvent> console = new ConsoleAppender<>();
    console.setContext(context);
    console.setName("STDOUT");
    console.setEncoder(encoder);
    console.start();
    context.getLogger("ca.helu.pallas").setLevel(Level.INFO);
    for (String name : Logging.PINNED) {
      context.getLogger(name).setLevel(Level.WARN);
    }
    Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    root.setLevel(Level.INFO);
    root.addAppender(console);
  }
}
