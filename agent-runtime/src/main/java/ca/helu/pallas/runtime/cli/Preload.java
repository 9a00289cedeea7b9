package ca.helu.pallas.runtime.cli;

import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeployment;
import org.slf4j.LoggerFactory;

/**
 * Loads and initialises the server's heavy classes (Undertow, the MCP SDK, Reactor, Micrometer) and
 * the manifest's deserializers on other threads while the main thread reads the command line and
 * the manifest and sets up logging: on 2 cores this takes a few hundred milliseconds off the time
 * to ready. Purely an optimisation: failures are ignored and the classes load normally when first
 * used.
 */
final class Preload {
  private static final String[] CLASSES = {
    "io.undertow.Undertow",
    "io.undertow.servlet.Servlets",
    "io.undertow.servlet.core.DeploymentManagerImpl",
    "org.xnio.nio.NioXnioProvider",
    "io.modelcontextprotocol.server.McpAsyncServer",
    "io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider",
    "io.modelcontextprotocol.spec.McpSchema",
    "io.modelcontextprotocol.json.McpJsonDefaults",
    "reactor.core.publisher.Mono",
    "reactor.core.publisher.Flux",
    "reactor.core.scheduler.Schedulers",
    "io.micrometer.prometheusmetrics.PrometheusMeterRegistry",
  };

  private Preload() {}

  static void start() {
    // the manifest's deserializers (a fabric8 CustomResource: slow to introspect) are built while
    // the command line is read; the main thread then finds them ready
    Thread.ofPlatform()
        .daemon()
        .name("pallas-preload-manifest")
        .start(() -> {
          try {
            ManifestParser.yamlMapper().readerFor(PallasDeployment.class);
          } catch (Throwable e) {
            // only an optimisation
          }
        });
    // logging is set up here, on this thread, before the classes below load: some of them log as
    // they initialise, and what another thread logs while SLF4J initialises is replayed with a
    // warning on stderr
    LoggerFactory.getILoggerFactory();
    Thread.ofPlatform()
        .daemon()
        .name("pallas-preload")
        .start(() -> {
          ClassLoader loader = Preload.class.getClassLoader();
          for (String name : CLASSES) {
            try {
              Class.forName(name, true, loader);
            } catch (Throwable e) {
              // only an optimisation
            }
          }
        });
  }
}
