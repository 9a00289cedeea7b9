package ca.helu.pallas.runtime.cli;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.InvalidDeploymentException;
import ca.helu.pallas.api.ManifestParser;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.runtime.config.Environment;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import ca.helu.pallas.runtime.registry.RegistryServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The registry pod: serves server.json for the manifest (a mounted ConfigMap) and picks up changes
 * within seconds. A manifest that becomes invalid is reported and the last good one kept.
 */
@Command(
    name = "registry",
    mixinStandardHelpOptions = true,
    description = "Serve the registry of a PallasDeployment (the Kubernetes registry pod).")
final class RegistryCommand implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger(RegistryCommand.class);

  @Mixin CommonOptions common = new CommonOptions();

  @Option(
      names = "--agent-url-template",
      paramLabel = "TEMPLATE",
      description =
          "Published MCP URL of each agent when spec.host is unset; {deployment}, {namespace},"
              + " {name}, {dnsName}, {port} are replaced (default ${DEFAULT-VALUE})")
  String urlTemplate = "http://{deployment}-{dnsName}.{namespace}.svc:{port}/mcp";

  @Option(
      names = "--reload-seconds",
      paramLabel = "SECONDS",
      description = "How often the manifest is re-read (default ${DEFAULT-VALUE})")
  int reloadSeconds = 2;

  @Override
  public Integer call() throws Exception {
    Environment env = common.environment();
    Path file;
    String firstText;
    PallasDeployment first;
    try {
      file = common.resolve(env);
      firstText = readOrEmpty(file);
      first = ManifestParser.parse(firstText, file.toString());
    } catch (InvalidDeploymentException e) {
      System.err.println(e.getMessage());
      return 2;
    }
    AtomicReference<PallasDeployment> current = new AtomicReference<>(first);
    PallasMetrics metrics = new PallasMetrics();
    RegistryServer server =
        new RegistryServer(
                common.bind,
                first.spec().effectiveRegistry().effectivePort(),
                first.spec(),
                agent -> url(current.get(), agent),
                metrics)
            .start();
    System.out.println(
        "registry: http://localhost:" + server.port() + "/.well-known/mcp/server.json");
    metrics.bindJvmMetrics();
    ScheduledExecutorService reload = Executors.newSingleThreadScheduledExecutor();
    // the text first parsed, not a fresh read: a change made while starting must still be seen
    AtomicReference<String> lastText = new AtomicReference<>(firstText);
    reload.scheduleWithFixedDelay(
        () -> {
          try {
            String text = Files.readString(file);
            if (text.equals(lastText.getAndSet(text))) {
              return;
            }
            PallasDeployment next = ManifestParser.parse(text, file.toString());
            current.set(next);
            server.update(next.spec());
            LOG.info("registry reloaded: {} agents", next.spec().effectiveAgents().size());
          } catch (InvalidDeploymentException e) {
            LOG.error(
                "manifest changed but is invalid; still serving the last good one: {}",
                e.getMessage());
          } catch (Exception e) {
            LOG.warn("cannot re-read {}: {}", file, e.getMessage());
          }
        },
        reloadSeconds,
        reloadSeconds,
        TimeUnit.SECONDS);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  reload.shutdownNow();
                  server.close();
                },
                "pallas-shutdown"));
    Thread.currentThread().join();
    return 0;
  }

  private static String readOrEmpty(Path file) {
    try {
      return Files.readString(file);
    } catch (java.io.IOException e) {
      throw new InvalidDeploymentException(
          file.toString(), java.util.List.of("cannot read file: " + e.getMessage()));
    }
  }

  private String url(PallasDeployment d, AgentSpec agent) {
    int port = d.spec().portOf(agent);
    if (d.spec().host() != null) {
      return "http://" + d.spec().host() + ":" + port + "/mcp";
    }
    String namespace =
        d.metadata().getNamespace() == null ? "default" : d.metadata().getNamespace();
    return urlTemplate
        .replace("{deployment}", d.name())
        .replace("{namespace}", namespace)
        .replace("{name}", agent.name())
        .replace("{dnsName}", agent.name().replace('_', '-'))
        .replace("{port}", Integer.toString(port));
  }
}
