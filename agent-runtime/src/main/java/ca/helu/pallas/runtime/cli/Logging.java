package ca.helu.pallas.runtime.cli;

import ca.helu.pallas.runtime.config.Environment;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Seed 001 §5's knobs: PALLAS_LOG_LEVEL for Pallas' own loggers (default INFO);
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

  static void configure(Environment env) {
    if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context)) {
      return;
    }
    Level pallas = Level.toLevel(env.get("PALLAS_LOG_LEVEL").orElse("INFO"), Level.INFO);
    var explicitRoot = env.get("PALLAS_ROOT_LOG_LEVEL");
    Level root =
        explicitRoot
            .map(v -> Level.toLevel(v, Level.INFO))
            .orElse(pallas.isGreaterOrEqual(Level.INFO) ? pallas : Level.INFO);
    context.getLogger(Logger.ROOT_LOGGER_NAME).setLevel(root);
    context.getLogger("ca.helu.pallas").setLevel(pallas);
    if (explicitRoot.isEmpty()) {
      for (String name : PINNED) {
        context.getLogger(name).setLevel(Level.WARN);
      }
    }
  }
}
