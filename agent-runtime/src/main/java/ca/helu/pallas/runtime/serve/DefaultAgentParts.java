package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.runtime.config.Environment;
import ca.helu.pallas.runtime.config.Secrets;
import ca.helu.pallas.runtime.downstream.McpProbe;
import ca.helu.pallas.runtime.downstream.McpToolServer;
import ca.helu.pallas.runtime.downstream.McpToolServers;
import ca.helu.pallas.runtime.health.AgentHealth;
import ca.helu.pallas.runtime.health.HealthMonitor;
import ca.helu.pallas.runtime.health.ProviderHealth;
import ca.helu.pallas.runtime.llm.BuiltInModels;
import ca.helu.pallas.runtime.llm.ModelChooser;
import ca.helu.pallas.runtime.llm.ModelRef;
import ca.helu.pallas.runtime.llm.ProviderPreflight;
import ca.helu.pallas.runtime.llm.Retry;
import ca.helu.pallas.runtime.loop.ModelClient;
import ca.helu.pallas.runtime.loop.ToolServer;
import ca.helu.pallas.runtime.mcp.ServerCatalog;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import ca.helu.pallas.runtime.tracing.Tracing;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

/**
 * Assembles agents' parts from the manifest: the model ({@link ModelChooser}), the clients of the
 * servers it calls ({@link McpToolServers}) and health ({@link HealthMonitor}, with the providers'
 * checks of {@link ProviderHealth}).
 */
public final class DefaultAgentParts implements AgentPartsFactory, AutoCloseable {
  /** Timings that tests and benchmarks may shorten. */
  public record Timings(
      Duration slowModelDelay,
      Duration healthInterval,
      Duration probeTimeout,
      Duration providerReprobe,
      Duration peerTimeout,
      Retry retry) {
    public static final Timings DEFAULT =
        new Timings(
            BuiltInModels.DEFAULT_SLOW_DELAY,
            Duration.ofSeconds(15),
            McpProbe.DEFAULT_TIMEOUT,
            Duration.ofMinutes(5),
            Duration.ofMinutes(10),
            Retry.DEFAULT);

    /** These timings, the downstream servers probed every {@code interval}. */
    public Timings withHealthInterval(Duration interval) {
      return new Timings(
          slowModelDelay, interval, probeTimeout, providerReprobe, peerTimeout, retry);
    }

    /** These timings, each LLM request bounded by {@code timeout} as a whole. */
    public Timings withLlmTimeout(Duration timeout) {
      return new Timings(
          slowModelDelay,
          healthInterval,
          probeTimeout,
          providerReprobe,
          peerTimeout,
          retry.withTimeout(timeout));
    }
  }

  private final Secrets secrets;
  private final PallasMetrics metrics;
  private final Timings timings;
  private final ModelChooser models;
  private final McpToolServers toolServers;
  private final ProviderHealth providers;
  private final Tracing tracing;
  private volatile HttpClient http;
  private final List<AutoCloseable> opened = new CopyOnWriteArrayList<>();

  public DefaultAgentParts(Environment env, PallasMetrics metrics) {
    this(env, metrics, Timings.DEFAULT);
  }

  public DefaultAgentParts(Environment env, PallasMetrics metrics, Timings timings) {
    this.secrets = new Secrets(env);
    this.metrics = metrics;
    this.timings = timings;
    this.models = new ModelChooser(secrets, timings.slowModelDelay(), timings.retry());
    this.toolServers = new McpToolServers(secrets, timings.peerTimeout());
    this.providers = new ProviderHealth(metrics::providerUp);
    this.tracing = Tracing.from(env);
  }

  @Override
  public McpToolServers toolServers() {
    return toolServers;
  }

  /** The process's tracing, from the {@code OTEL_*} environment (docs/configuration.md). */
  public Tracing tracing() {
    return tracing;
  }

  /** Built on first use: creating one initialises TLS, which a test-model fleet never needs. */
  private HttpClient http() {
    HttpClient client = http;
    if (client == null) {
      synchronized (this) {
        if (http == null) {
          http =
              HttpClient.newBuilder()
                  .connectTimeout(Duration.ofSeconds(3))
                  .version(HttpClient.Version.HTTP_1_1)
                  .build();
        }
        client = http;
      }
    }
    return client;
  }

  /**
   * Checks the models of {@code served}, the agents this process serves ({@link Fleet#served()}),
   * once now (warn only) and again every re-probe period. Only theirs: an agent pod holds only its
   * own agent's keys, so checking another agent's provider would fail (HTTP 401) and report that
   * provider down from a pod that does not use it (docs/runtime.md, "Health").
   */
  public void preflight(PallasDeploymentSpec spec, List<AgentSpec> served) {
    ProviderPreflight preflight = new ProviderPreflight(this::http);
    Map<String, ProviderHealth.Target> targets = new LinkedHashMap<>();
    for (AgentSpec agent : served) {
      ModelRef m = ModelRef.of(spec.modelOf(agent));
      targets.putIfAbsent(
          m.key(),
          new ProviderHealth.Target(
              m.key(), m.provider(), () -> preflight.check(m, m.providerSpec(spec), secrets)));
    }
    providers.start(targets.values(), timings.providerReprobe());
  }

  @Override
  public AgentParts create(PallasDeploymentSpec spec, AgentSpec agent, McpToolServers.Peers peers) {
    ModelRef m = ModelRef.of(spec.modelOf(agent));
    ModelChooser.Choice model = models.choose(spec, agent);
    List<McpToolServer> servers = toolServers.of(spec, agent, peers);
    for (McpToolServer server : servers) {
      metrics.toolCallsAtOnce(agent.name(), server.name(), server::inFlight, server::waiting);
    }
    HealthMonitor monitor =
        new HealthMonitor(
            servers.stream()
                .map(s ->
                    new HealthMonitor.Target(s.name(), s.url(), s::probeHeaders, s.callHealth()))
                .toList(),
            new McpProbe(this::http, timings.probeTimeout()),
            m.provider(),
            () -> providers.latest(m.key()),
            (server, up) -> metrics.downstreamUp(agent.name(), server, up),
            timings.healthInterval(),
            model.unavailable());
    providers.onFlip(m.key(), monitor::providerFlipped);
    // a name that is no mcpServers entry is another agent (McpToolServers)
    Set<String> agents =
        servers.stream()
            .map(McpToolServer::name)
            .filter(name -> spec.mcpServer(name).isEmpty())
            .collect(Collectors.toSet());
    // the registry indexes peers as agents: the catalog holds the downstream servers alone
    ServerCatalog catalog =
        new DownstreamCatalog(
            servers.stream().filter(s -> !agents.contains(s.name())).toList(), monitor);
    Parts parts =
        new Parts(tracing.traced(model.client()), servers, agents, monitor, tracing, catalog);
    opened.add(parts);
    return parts;
  }

  private record Parts(
      ModelClient model,
      List<McpToolServer> servers,
      Set<String> peers,
      HealthMonitor monitor,
      Tracing tracing,
      ServerCatalog catalog)
      implements AgentParts {
    @Override
    public List<ToolServer> toolServers() {
      return servers.stream()
          .map(s -> tracing.traced(s, s.url(), peers.contains(s.name())))
          .toList();
    }

    @Override
    public AgentHealth health() {
      return monitor;
    }

    @Override
    public void close() {
      monitor.close();
      servers.forEach(McpToolServer::close);
    }
  }

  @Override
  public void close() {
    providers.close();
    for (AutoCloseable c : opened) {
      try {
        c.close();
      } catch (Exception e) {
        // closing anyway
      }
    }
    opened.clear();
    // after the agents: their last spans are exported before the exporter stops
    tracing.close();
  }
}
