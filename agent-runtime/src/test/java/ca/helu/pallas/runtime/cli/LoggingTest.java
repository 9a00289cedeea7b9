package ca.helu.pallas.runtime.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ca.helu.pallas.runtime.config.Environment;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

class LoggingTest {
  private final LoggerContext context = (LoggerContext) LoggerFactory.getILoggerFactory();

  @AfterEach
  void reset() {
    Logging.configure(new Environment(Map.of()), Logging.Format.json);
  }

  private Level level(String logger) {
    return context.getLogger(logger).getEffectiveLevel();
  }

  @Test
  void debugForPallasKeepsLibrariesQuiet() {
    Logging.configure(new Environment(Map.of("PALLAS_LOG_LEVEL", "DEBUG")), Logging.Format.json);
    assertThat(level("ca.helu.pallas.runtime.mcp")).isEqualTo(Level.DEBUG);
    assertThat(level(Logger.ROOT_LOGGER_NAME)).isEqualTo(Level.INFO);
    assertThat(level("io.undertow.request")).isEqualTo(Level.WARN);
    assertThat(level("dev.langchain4j.http")).isEqualTo(Level.WARN);
  }

  @Test
  void rootLevelIsSetOnlyExplicitly() {
    Logging.configure(
        new Environment(Map.of("PALLAS_ROOT_LOG_LEVEL", "DEBUG")), Logging.Format.json);
    assertThat(level("ca.helu.pallas")).isEqualTo(Level.INFO);
    assertThat(level("org.example.anything")).isEqualTo(Level.DEBUG);
    Logging.configure(new Environment(Map.of("PALLAS_LOG_LEVEL", "WARN")), Logging.Format.json);
    assertThat(level("ca.helu.pallas")).isEqualTo(Level.WARN);
    assertThat(level("org.example.anything")).as("max(pallas, INFO)").isEqualTo(Level.WARN);
  }
}
