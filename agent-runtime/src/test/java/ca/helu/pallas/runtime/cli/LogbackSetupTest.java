package ca.helu.pallas.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.ConsoleAppender;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import net.logstash.logback.encoder.LogstashEncoder;
import org.junit.jupiter.api.Test;

/** LogbackSetup builds what logback.xml describes: the same loggers, appender and JSON lines. */
class LogbackSetupTest {
  private static LoggerContext fromXml() throws Exception {
    LoggerContext context = new LoggerContext();
    JoranConfigurator xml = new JoranConfigurator();
    xml.setContext(context);
    xml.doConfigure(LogbackSetupTest.class.getResource("/logback.xml"));
    return context;
  }

  private static LoggerContext fromCode() {
    LoggerContext context = new LoggerContext();
    LogbackSetup.apply(context);
    return context;
  }

  private static List<String> loggers() {
    List<String> names = new ArrayList<>(Logging.PINNED);
    names.addAll(
        List.of(
            Logger.ROOT_LOGGER_NAME,
            "ca.helu.pallas",
            "ca.helu.pallas.runtime.serve.Fleet",
            "io.undertow.request",
            "org.example.anything"));
    return names;
  }

  private static ConsoleAppender<ILoggingEvent> console(LoggerContext context) {
    Appender<ILoggingEvent> appender =
        context.getLogger(Logger.ROOT_LOGGER_NAME).getAppender("STDOUT");
    assertThat(appender).isInstanceOf(ConsoleAppender.class);
    assertThat(appender.isStarted()).isTrue();
    return (ConsoleAppender<ILoggingEvent>) appender;
  }

  private static String encode(LoggerContext context, Throwable error) {
    return encode(context, error, "helper");
  }

  private static String encode(LoggerContext context, Throwable error, String agent) {
    var encoder = console(context).getEncoder();
    assertThat(encoder).isInstanceOf(LogstashEncoder.class);
    LoggingEvent event =
        new LoggingEvent(
            Logger.class.getName(),
            context.getLogger("ca.helu.pallas.runtime.serve.Fleet"),
            Level.WARN,
            "agent {} serving on port {}",
            error,
            new Object[] {agent, 24201});
    event.setInstant(Instant.parse("2026-11-23T22:00:00.123456789Z"));
    event.setMDCPropertyMap(Map.of("agent", "helper", "request_id", "7"));
    return new String(encoder.encode(event), StandardCharsets.UTF_8);
  }

  @Test
  void theLoggersAreThoseOfLogbackXml() throws Exception {
    LoggerContext xml = fromXml();
    LoggerContext code = fromCode();
    for (String name : loggers()) {
      assertThat(code.getLogger(name).getEffectiveLevel())
          .as(name)
          .isEqualTo(xml.getLogger(name).getEffectiveLevel());
      assertThat(code.getLogger(name).getLevel())
          .as(name)
          .isEqualTo(xml.getLogger(name).getLevel());
    }
    List<String> xmlAppenders = new ArrayList<>();
    xml.getLogger(Logger.ROOT_LOGGER_NAME)
        .iteratorForAppenders()
        .forEachRemaining(a -> xmlAppenders.add(a.getName()));
    List<String> codeAppenders = new ArrayList<>();
    code.getLogger(Logger.ROOT_LOGGER_NAME)
        .iteratorForAppenders()
        .forEachRemaining(a -> codeAppenders.add(a.getName()));
    assertThat(codeAppenders).isEqualTo(xmlAppenders).containsExactly("STDOUT");
    assertThat(console(code).getTarget()).isEqualTo(console(xml).getTarget());
  }

  @Test
  void theJsonLinesAreThoseOfLogbackXml() throws Exception {
    LoggerContext xml = fromXml();
    LoggerContext code = fromCode();
    String line = encode(code, null);
    assertThat(line)
        .isEqualTo(encode(xml, null))
        .startsWith("{\"time\":\"2026-11-23T22:00:00.123456789Z\"")
        .contains("\"logger\":\"ca.helu.pallas.runtime.serve.Fleet\"", "\"agent\":\"helper\"")
        .doesNotContain("level_value", "@version");
    IllegalStateException error = new IllegalStateException("boom");
    assertThat(encode(code, error)).isEqualTo(encode(xml, error));
  }

  /**
   * Nothing a client sends is logged whole (issue 16 §4): a 2 MiB string in a message, or in an
   * exception's text, is cut to 16 KiB and says how much was left out, from the code and from
   * logback.xml alike.
   */
  @Test
  void everyStringOfALineIsBounded() throws Exception {
    String big = "c".repeat(2 << 20);
    for (LoggerContext context : List.of(fromCode(), fromXml())) {
      String line = encode(context, new IllegalStateException(big), big);
      assertThat(line.length()).isLessThan(3 * BoundedLogFields.MAX_CHARS + 2048);
      assertThat(line).contains("more characters not logged", "\"agent\":\"helper\"");
    }
  }

  @Test
  void logbackReadsItsFilesUnlessTheCommandLineEnabledIt() {
    // Main enables it; nothing in this test JVM did
    LogbackSetup setup = new LogbackSetup();
    LoggerContext context = new LoggerContext();
    setup.setContext(context);
    assertThat(setup.configure(context)).isEqualTo(Configurator.ExecutionStatus.INVOKE_NEXT_IF_ANY);
    assertThat(context.getLogger(Logger.ROOT_LOGGER_NAME).iteratorForAppenders().hasNext())
        .isFalse();
  }
}
