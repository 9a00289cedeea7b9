package ca.helu.pallas.runtime.cli;

import ca.helu.pallas.api.InvalidDeploymentException;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.runtime.auth.InboundAuth;
import ca.helu.pallas.runtime.config.Environment;
import ca.helu.pallas.runtime.http.EdgeLimits;
import ca.helu.pallas.runtime.llm.Retry;
import ca.helu.pallas.runtime.mcp.TurnLimits;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import ca.helu.pallas.runtime.serve.DefaultAgentParts;
import ca.helu.pallas.runtime.serve.Fleet;
import ca.helu.pallas.runtime.serve.PodIdentity;
import ca.helu.pallas.runtime.serve.ServeOptions;
import ca.helu.pallas.runtime.store.HistoryStore;
import ca.helu.pallas.runtime.store.MemoryHistoryStore;
import ca.helu.pallas.runtime.store.PostgresStore;
import ca.helu.pallas.runtime.store.StoreConfig;
import ca.helu.pallas.runtime.tracing.Tracing;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs the registry and every agent (or one agent) of a PallasDeployment in this process. */
final class ServeCommand implements Command {
  static final String DESCRIPTION =
      "Serve every agent of a PallasDeployment and its registry, or one agent.";
  private static final Logger LOG = LoggerFactory.getLogger(ServeCommand.class);

  final CommonOptions common = new CommonOptions();
  final List<String> agents = new ArrayList<>();
  boolean cluster;
  int drainSeconds = 30;
  int bodyTimeoutSeconds = 30;
  int turnTimeoutSeconds = (int) TurnLimits.DEFAULT.deadline().toSeconds();
  int llmTimeoutSeconds = (int) Retry.DEFAULT.timeout().toSeconds();
  int maxSessions = EdgeLimits.DEFAULT.maxSessions();
  long sessionIdleSeconds = EdgeLimits.DEFAULT.sessionIdle().toSeconds();
  // null: derived from the heap (docs/runtime.md, "Memory")
  Integer maxConcurrentRequests;
  Long maxBodyMib;
  Long maxBodyMibHeld;
  int maxConnections = EdgeLimits.DEFAULT.maxConnections();
  Integer probePort;
  String store;
  long historyTtlSeconds = StoreConfig.DEFAULT_TTL.toSeconds();
  Long historyMaxChars;
  Path staticTokens;
  final List<String> allowedOrigins = new ArrayList<>();

  @Override
  public CommandOptions options() {
    CommandOptions options = new CommandOptions("serve", DESCRIPTION);
    common.addTo(options);
    return options
        .value(
            "--agent",
            "NAME",
            "Serve this agent only, no registry; repeated, these agents (a pod group's pod)",
            agents::add)
        .flag(
            "--cluster",
            "Reach other agents by their Kubernetes Service names (X-agent.namespace.svc), as the"
                + " operator deploys them, instead of on 127.0.0.1",
            () -> cluster = true)
        .value(
            "--drain-timeout",
            "SECONDS",
            "On SIGTERM, wait this long for calls in progress (default: " + drainSeconds + ")",
            v -> drainSeconds = CommandOptions.intValue("--drain-timeout", v))
        .value(
            "--body-timeout",
            "SECONDS",
            "Seconds a request's headers and body may take to arrive before the connection is"
                + " closed (default: "
                + bodyTimeoutSeconds
                + ")",
            v -> bodyTimeoutSeconds = CommandOptions.intValue("--body-timeout", v))
        .value(
            "--turn-timeout",
            "SECONDS",
            "The most one send_message turn takes once it has its conversation: LLM requests,"
                + " their retries and tool calls; past it the call gets an error naming the"
                + " deadline (default: "
                + turnTimeoutSeconds
                + ")",
            v -> turnTimeoutSeconds = CommandOptions.intValue("--turn-timeout", v))
        .value(
            "--llm-timeout",
            "SECONDS",
            "The most one LLM request takes, from sending it to the answer's last byte; then it"
                + " is retried within the turn's deadline (default: "
                + llmTimeoutSeconds
                + ")",
            v -> llmTimeoutSeconds = CommandOptions.intValue("--llm-timeout", v))
        .value(
            "--max-sessions",
            "N",
            "MCP sessions one agent holds; a new session past it is refused with 503 (default: "
                + maxSessions
                + ")",
            v -> maxSessions = CommandOptions.intValue("--max-sessions", v))
        .value(
            "--session-idle-timeout",
            "SECONDS",
            "An MCP session without a request or an open stream this long is closed, its history"
                + " freed (default: "
                + sessionIdleSeconds
                + ")",
            v -> sessionIdleSeconds = CommandOptions.longValue("--session-idle-timeout", v))
        .value(
            "--max-concurrent-requests",
            "N",
            "MCP requests this process's agents answer at once besides ping and get_health; more"
                + " are refused with 503 (default: what the heap holds, "
                + EdgeLimits.DEFAULT.maxConcurrentRequests()
                + " here)",
            v -> maxConcurrentRequests = CommandOptions.intValue("--max-concurrent-requests", v))
        .value(
            "--max-body-size",
            "MIB",
            "The largest request body, in MiB; a larger one is refused with 413 (default: what the"
                + " heap holds, at most 80; "
                + EdgeLimits.mib(EdgeLimits.DEFAULT.maxBodyBytes())
                + " here)",
            v -> maxBodyMib = CommandOptions.longValue("--max-body-size", v))
        .value(
            "--max-body-bytes-held",
            "MIB",
            "MiB of request bodies this process's agents hold at once, from arrival until"
                + " answered; more are refused with 503 (default: what the heap holds, "
                + EdgeLimits.mib(EdgeLimits.DEFAULT.maxBodyBytesHeld())
                + " here)",
            v -> maxBodyMibHeld = CommandOptions.longValue("--max-body-bytes-held", v))
        .value(
            "--max-connections",
            "N",
            "Connections one agent's port holds open; more wait in the kernel's backlog, and past"
                + " N minus max(8, N/16) only /livez, /readyz, /metrics, ping and get_health are"
                + " answered (default: "
                + maxConnections
                + ")",
            v -> maxConnections = CommandOptions.intValue("--max-connections", v))
        .value(
            "--probe-port",
            "PORT",
            "Also answer /livez and /readyz (only) on this port, for the kubelet's probes; needs"
                + " --agent (default: none)",
            v -> probePort = CommandOptions.intValue("--probe-port", v))
        .value(
            "--store",
            "JDBC-URL",
            "Keep conversation histories in this PostgreSQL, jdbc:postgresql://host:5432/db,"
                + " shared by every replica and kept across restarts (default: $PALLAS_STORE_URL,"
                + " else in memory); credentials from PALLAS_STORE_USERNAME and"
                + " PALLAS_STORE_PASSWORD",
            v -> store = v)
        .value(
            "--history-ttl",
            "SECONDS",
            "With --store, a conversation without a turn this long is deleted (default: "
                + historyTtlSeconds
                + ", 30 days)",
            v -> historyTtlSeconds = CommandOptions.longValue("--history-ttl", v))
        .value(
            "--history-max-chars",
            "N",
            "Characters one conversation's history holds; past it the oldest whole turns are"
                + " dropped (default: what the model reads, contextWindow x 4)",
            v -> historyMaxChars = CommandOptions.longValue("--history-max-chars", v))
        .value(
            "--static-tokens",
            "DIR",
            "With spec.auth.staticTokens: the callers' tokens, one file per caller named after it"
                + " (a mounted Secret) (default: $PALLAS_STATIC_TOKENS_DIR)",
            v -> staticTokens = Path.of(v))
        .value(
            "--allowed-origin",
            "ORIGIN",
            "Browser Origin accepted besides localhost (repeatable)",
            allowedOrigins::add);
  }

  /**
   * The PostgreSQL store of --store or PALLAS_STORE_URL, its credentials from the environment only
   * (docs/configuration.md, "Conversation store"); null: histories in memory.
   */
  private StoreConfig storeConfig(Environment env) {
    String url = store != null ? store : env.get("PALLAS_STORE_URL").orElse(null);
    if (url == null || url.isBlank()) {
      return null;
    }
    if (historyTtlSeconds < 1) {
      throw new IllegalArgumentException("--history-ttl must be at least 1 second");
    }
    return StoreConfig.of(
            url,
            env.get("PALLAS_STORE_USERNAME").orElse(null),
            env.get("PALLAS_STORE_PASSWORD").orElse(null))
        .withTtl(Duration.ofSeconds(historyTtlSeconds));
  }

  private static long positive(long chars) {
    if (chars < 1) {
      throw new IllegalArgumentException("--history-max-chars must be at least 1");
    }
    return chars;
  }

  @Override
  public int call() {
    Environment env = common.environment();
    PallasDeployment deployment;
    ServeOptions options;
    StoreConfig storeConfig;
    try {
      deployment = common.read(env);
      if (turnTimeoutSeconds < 1 || llmTimeoutSeconds < 1) {
        throw new IllegalArgumentException(
            (turnTimeoutSeconds < 1 ? "--turn-timeout" : "--llm-timeout")
                + " must be at least 1 second");
      }
      EdgeLimits derived = EdgeLimits.DEFAULT;
      long maxBody = maxBodyMib == null ? derived.maxBodyBytes() : maxBodyMib << 20;
      EdgeLimits limits =
          new EdgeLimits(
              maxSessions,
              Duration.ofSeconds(sessionIdleSeconds),
              maxConcurrentRequests == null
                  ? derived.maxConcurrentRequests()
                  : maxConcurrentRequests,
              maxBody,
              maxBodyMibHeld == null
                  ? Math.max(maxBody, derived.maxBodyBytesHeld())
                  : maxBodyMibHeld << 20,
              maxConnections,
              derived.maxHistoryChars());
      options =
          new ServeOptions(
              common.bind,
              List.copyOf(agents),
              cluster,
              Duration.ofSeconds(drainSeconds),
              List.copyOf(allowedOrigins),
              Duration.ofSeconds(bodyTimeoutSeconds),
              limits,
              probePort,
              new TurnLimits(
                  Duration.ofSeconds(turnTimeoutSeconds), TurnLimits.DEFAULT.heartbeat()),
              historyMaxChars == null ? Long.MAX_VALUE : positive(historyMaxChars),
              CommonOptions.staticTokens(staticTokens, env),
              cluster ? PodIdentity.from(env).orElse(null) : null);
      InboundAuth.check(deployment.getSpec().auth(), options.staticTokens());
      storeConfig = storeConfig(env);
      env = Tracing.withManifest(env, deployment.getSpec().tracing());

    } catch (InvalidDeploymentException | IllegalArgumentException e) {
      System.err.println(e.getMessage());
      return 2;
    }
    EdgeLimits limits = options.limits();
    LOG.info(
        "limits for a heap of {} (docs/runtime.md, Memory): bodies of at most {}, {} of them held"
            + " at once, {} requests at once, {} characters of history",
        EdgeLimits.mib(Runtime.getRuntime().maxMemory()),
        EdgeLimits.mib(limits.maxBodyBytes()),
        EdgeLimits.mib(limits.maxBodyBytesHeld()),
        limits.maxConcurrentRequests(),
        limits.maxHistoryChars());
    // with tracing on, latencies carry the trace they were observed in (docs/observability.md)
    PallasMetrics metrics = new PallasMetrics(Tracing.configured(env));
    HistoryStore histories =
        storeConfig == null
            ? new MemoryHistoryStore()
            : new PostgresStore(
                storeConfig,
                PostgresStore.fleetKey(deployment.getMetadata().getNamespace(), deployment.name()),
                metrics::storeUp);
    LOG.info("conversation histories: {}", histories.describe());
    DefaultAgentParts parts;
    try {
      parts =
          new DefaultAgentParts(
              env,
              metrics,
              DefaultAgentParts.Timings.DEFAULT.withLlmTimeout(
                  Duration.ofSeconds(llmTimeoutSeconds)));
    } catch (IllegalArgumentException e) {
      // a setting that cannot be used, e.g. OTEL_TRACES_SAMPLER_ARG (docs/configuration.md): its
      // message names it
      System.err.println("pallas: cannot start: " + e.getMessage());
      histories.close();
      return 1;
    }
    Fleet fleet =
        new Fleet(deployment, options, metrics, parts, histories, histories.sessionStores());
    CountDownLatch stopped = new CountDownLatch(1);
    // registered before anything listens: a SIGTERM right after /readyz turns 200 still drains
    Thread shutdown =
        new Thread(
            () -> {
              LOG.info("shutting down: draining calls in progress");
              fleet.drainAndClose(options.drainTimeout());
              parts.close();
              histories.close();
              stopped.countDown();
            },
            "pallas-shutdown");
    Runtime.getRuntime().addShutdownHook(shutdown);
    try {
      parts.preflight(deployment.getSpec(), fleet.served());
      fleet.start();
    } catch (RuntimeException e) {
      Runtime.getRuntime().removeShutdownHook(shutdown);
      System.err.println("pallas: cannot start: " + e.getMessage());
      fleet.close();
      parts.close();
      histories.close();
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
