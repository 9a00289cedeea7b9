package ca.helu.pallas.runtime.cli;

import ca.helu.pallas.api.InvalidDeploymentException;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.runtime.config.Environment;
import ca.helu.pallas.runtime.http.EdgeLimits;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import ca.helu.pallas.runtime.serve.DefaultAgentParts;
import ca.helu.pallas.runtime.serve.Fleet;
import ca.helu.pallas.runtime.serve.ServeOptions;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** Runs the registry and every agent (or one agent) of a PallasDeployment in this process. */
@Command(
    name = "serve",
    mixinStandardHelpOptions = true,
    description = "Serve every agent of a PallasDeployment and its registry, or one agent.")
final class ServeCommand implements Callable<Integer> {
  private static final Logger LOG = LoggerFactory.getLogger(ServeCommand.class);

  @Mixin CommonOptions common = new CommonOptions();

  @Option(
      names = "--agent",
      paramLabel = "NAME",
      description = "Serve this agent only, no registry")
  String agent;

  @Option(
      names = "--cluster",
      description =
          "Reach other agents by their Kubernetes Service names (X-agent.namespace.svc), as the"
              + " operator deploys them, instead of on 127.0.0.1")
  boolean cluster;

  @Option(
      names = "--drain-timeout",
      paramLabel = "SECONDS",
      description = "On SIGTERM, wait this long for calls in progress (default ${DEFAULT-VALUE})")
  int drainSeconds = 30;

  @Option(
      names = "--body-timeout",
      description =
          "Seconds a request's headers and body may take to arrive before the connection is"
              + " closed (default: ${DEFAULT-VALUE}).")
  int bodyTimeoutSeconds = 30;

  @Option(
      names = "--max-sessions",
      paramLabel = "N",
      description =
          "MCP sessions one agent holds; a new session past it is refused with 503 (default:"
              + " ${DEFAULT-VALUE})")
  int maxSessions = EdgeLimits.DEFAULT.maxSessions();

  @Option(
      names = "--session-idle-timeout",
      paramLabel = "SECONDS",
      description =
          "An MCP session without a request or an open stream this long is closed, its history"
              + " freed (default: ${DEFAULT-VALUE})")
  long sessionIdleSeconds = EdgeLimits.DEFAULT.sessionIdle().toSeconds();

  @Option(
      names = "--max-concurrent-requests",
      paramLabel = "N",
      description =
          "MCP requests one agent answers at once besides ping and get_health; more are refused"
              + " with 503 (default: ${DEFAULT-VALUE})")
  int maxConcurrentRequests = EdgeLimits.DEFAULT.maxConcurrentRequests();

  @Option(
      names = "--max-body-bytes-held",
      paramLabel = "MIB",
      description =
          "MiB of request bodies one agent holds at once, from arrival until answered; more are"
              + " refused with 503 (default: ${DEFAULT-VALUE})")
  long maxBodyMibHeld = EdgeLimits.DEFAULT.maxBodyBytesHeld() >> 20;

  @Option(
      names = "--max-connections",
      paramLabel = "N",
      description =
          "Connections one agent's port holds open; more wait in the kernel's backlog, and past"
              + " N minus max(8, N/16) only /livez, /readyz, /metrics, ping and get_health are answered"
              + " (default: ${DEFAULT-VALUE})")
  int maxConnections = EdgeLimits.DEFAULT.maxConnections();

  @Option(
      names = "--probe-port",
      paramLabel = "PORT",
      description =
          "Also answer /livez and /readyz (only) on this port, for the kubelet's probes; needs"
              + " --agent (default: none)")
  Integer probePort;

  @Option(
      names = "--allowed-origin",
      paramLabel = "ORIGIN",
      description = "Browser Origin accepted besides localhost (repeatable)")
  List<String> allowedOrigins = List.of();

  @Override
  public Integer call() {
    Environment env = common.environment();
    PallasDeployment deployment;
    ServeOptions options;
    try {
      deployment = common.read(env);
      EdgeLimits limits =
          new EdgeLimits(
              maxSessions,
              Duration.ofSeconds(sessionIdleSeconds),
              maxConcurrentRequests,
              maxBodyMibHeld << 20,
              maxConnections);
      options =
          new ServeOptions(
              common.bind,
              agent,
              cluster,
              Duration.ofSeconds(drainSeconds),
              allowedOrigins,
              Duration.ofSeconds(bodyTimeoutSeconds),
              limits,
              probePort);
    } catch (InvalidDeploymentException | IllegalArgumentException e) {
      System.err.println(e.getMessage());
      return 2;
    }
    PallasMetrics metrics = new PallasMetrics();
    DefaultAgentParts parts = new DefaultAgentParts(env, metrics);
    Fleet fleet = new Fleet(deployment, options, metrics, parts);
    CountDownLatch stopped = new CountDownLatch(1);
    // registered before anything listens: a SIGTERM right after /readyz turns 200 still drains
    Thread shutdown =
        new Thread(
            () -> {
              LOG.info("shutting down: draining calls in progress");
              fleet.drainAndClose(options.drainTimeout());
              parts.close();
              stopped.countDown();
            },
            "pallas-shutdown");
    Runtime.getRuntime().addShutdownHook(shutdown);
    try {
      parts.preflight(deployment.getSpec());
      fleet.start();
    } catch (RuntimeException e) {
      Runtime.getRuntime().removeShutdownHook(shutdown);
      System.err.println("pallas: cannot start: " + e.getMessage());
      fleet.close();
      parts.close();
      return 1;
    }
    fleet.banner().forEach(System.out::println);
    // the JVM's own start time, so a pod's log tells its start-to-ready time (docs/images.md)
    System.out.printf(
        "ready %d ms after the JVM started%n",
        System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime());
    System.out.flush();
    metrics.bindJvmMetrics();
    try {
      stopped.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return 0;
  }
}
