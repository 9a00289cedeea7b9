package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.HeaderSpec;
import ca.helu.pallas.api.McpServerSpec;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.api.ProviderSpec;
import ca.helu.pallas.runtime.config.Environment;
import ca.helu.pallas.runtime.config.Secrets;
import ca.helu.pallas.runtime.downstream.McpToolServer;
import ca.helu.pallas.runtime.health.CheckResult;
import ca.helu.pallas.runtime.health.HealthMonitor;
import ca.helu.pallas.runtime.health.InitializeProbe;
import ca.helu.pallas.runtime.llm.BuiltInModels;
import ca.helu.pallas.runtime.llm.ProviderModel;
import ca.helu.pallas.runtime.llm.ProviderPreflight;
import ca.helu.pallas.runtime.llm.Retry;
import ca.helu.pallas.runtime.llm.RetryingModel;
import ca.helu.pallas.runtime.loop.ModelClient;
import ca.helu.pallas.runtime.loop.ToolServer;
import ca.helu.pallas.runtime.mcp.HealthReport;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.langchain4j.model.chat.response.ChatResponse;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds agents' parts from the manifest: models (built-in or through a provider), MCP clients for
 * downstream servers and peer agents, and health. Also runs the LLM preflight (warn only) and its
 * periodic re-probe.
 */
public final class DefaultAgentParts implements AgentPartsFactory, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(DefaultAgentParts.class);

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
            InitializeProbe.DEFAULT_TIMEOUT,
            Duration.ofMinutes(5),
            Duration.ofMinutes(10),
            Retry.DEFAULT);
  }

  private final Secrets secrets;
  private final PallasMetrics metrics;
  private final Timings timings;
  private volatile HttpClient http;
  private final Map<String, CheckResult> providerChecks = new ConcurrentHashMap<>();
  private final List<AutoCloseable> opened = new CopyOnWriteArrayList<>();
  private final ScheduledExecutorService reprobe =
      Executors.newSingleThreadScheduledExecutor(
          Thread.ofPlatform().daemon().name("pallas-llm-reprobe").factory());

  public DefaultAgentParts(Environment env, PallasMetrics metrics) {
    this(env, metrics, Timings.DEFAULT);
  }

  public DefaultAgentParts(Environment env, PallasMetrics metrics, Timings timings) {
    this.secrets = new Secrets(env);
    this.metrics = metrics;
    this.timings = timings;
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

  /** provider and model of a model string: openai.gpt-4o, anthropic.x, or a built-in name. */
  record Model(String provider, String name) {
    static Model of(String model) {
      if (BuiltInModels.isBuiltIn(model)) {
        return new Model(model, model);
      }
      int dot = model.indexOf('.');
      return new Model(model.substring(0, dot), model.substring(dot + 1));
    }

    String key() {
      return provider + "." + name;
    }
  }

  /** Checks every model the agents use, once now (warn only) and again every re-probe period. */
  public void preflight(PallasDeploymentSpec spec) {
    Map<String, Model> models = new LinkedHashMap<>();
    for (AgentSpec agent : spec.effectiveAgents()) {
      Model m = Model.of(spec.modelOf(agent));
      models.put(m.key(), m);
    }
    // on virtual threads, not a parallel stream: the common pool has one thread on 2 cores and the
    // MCP SDK completes its futures there, so a 5 s probe must never occupy it
    Runnable probeAll =
        () -> {
          try (var probes = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Model m : models.values()) {
              probes.submit(() -> preflight(spec, m));
            }
          }
        };
    probeAll.run();
    long period = timings.providerReprobe().toMillis();
    reprobe.scheduleWithFixedDelay(probeAll, period, period, TimeUnit.MILLISECONDS);
  }

  private void preflight(PallasDeploymentSpec spec, Model m) {
    CheckResult r =
        new ProviderPreflight(this::http)
            .check(m.provider(), m.name(), providerSpec(spec, m), secrets);
    CheckResult before = providerChecks.put(m.key(), r);
    metrics.providerUp(m.provider(), r.ok());
    if (!r.ok() && (before == null || before.ok())) {
      LOG.warn("LLM preflight failed for {}: {}", m.key(), r.message());
    } else if (r.ok() && before != null && !before.ok()) {
      LOG.info("LLM provider {} is reachable again", m.key());
    }
  }

  private static ProviderSpec providerSpec(PallasDeploymentSpec spec, Model m) {
    return switch (m.provider()) {
      case "openai" -> spec.effectiveProviders().openai();
      case "anthropic" -> spec.effectiveProviders().anthropic();
      default -> null;
    };
  }

  @Override
  public AgentParts create(PallasDeploymentSpec spec, AgentSpec agent, PeerUrls peers) {
    Model m = Model.of(spec.modelOf(agent));
    ModelChoice model = model(spec, agent, m);
    List<McpToolServer> servers = new ArrayList<>();
    List<HealthMonitor.Target> targets = new ArrayList<>();
    for (String name : agent.effectiveServers()) {
      McpToolServer client = toolServer(spec, agent, name, peers);
      servers.add(client);
      targets.add(new HealthMonitor.Target(name, client.url(), client.headers()));
    }
    HealthMonitor monitor =
        new HealthMonitor(
            targets,
            new InitializeProbe(this::http, timings.probeTimeout()),
            m.provider(),
            () -> providerChecks.get(m.key()),
            (server, up) -> metrics.downstreamUp(agent.name(), server, up),
            timings.healthInterval(),
            model.unavailable());
    Parts parts = new Parts(model.client(), List.copyOf(servers), monitor);
    opened.add(parts);
    return parts;
  }

  /** The agent's model, or why it cannot have one (then every call and get_health say so). */
  private record ModelChoice(ModelClient client, String unavailable) {}

  private ModelChoice model(PallasDeploymentSpec spec, AgentSpec agent, Model m) {
    if (BuiltInModels.isBuiltIn(m.provider())) {
      return new ModelChoice(BuiltInModels.create(m.provider(), timings.slowModelDelay()), null);
    }
    ProviderSpec provider = providerSpec(spec, m);
    String problem = ProviderModel.configurationProblem(m.provider(), provider, secrets);
    if (problem == null) {
      try {
        ModelClient client =
            ProviderModel.create(
                m.provider(),
                m.name(),
                provider,
                secrets,
                agent.effectiveRequestParams(),
                timings.retry().timeout(),
                agent.name());
        return new ModelChoice(new RetryingModel(client, timings.retry()), null);
      } catch (RuntimeException e) {
        problem = "cannot use " + m.key() + ": " + e.getMessage();
      }
    }
    // the agent still serves: calls get this error and get_health says error (docs/contract.md)
    LOG.error("agent {} cannot process requests: {}", agent.name(), problem);
    return new ModelChoice(new UnavailableModel(m.provider(), m.name(), problem), problem);
  }

  /** A downstream MCP server, or another agent (whose agent-named tool alone the model sees). */
  private McpToolServer toolServer(
      PallasDeploymentSpec spec, AgentSpec agent, String name, PeerUrls peers) {
    McpServerSpec server = spec.mcpServer(name).orElse(null);
    if (server != null) {
      return new McpToolServer(
          name,
          server.url(),
          headers(agent, server),
          server.effectiveForwardInboundAuth(),
          Duration.ofSeconds(server.effectiveTimeoutSeconds()),
          tool -> true);
    }
    AgentSpec peer = spec.agent(name).orElseThrow();
    return new McpToolServer(
        name, peers.of(peer), Map.of(), false, timings.peerTimeout(), peer.name()::equals);
  }

  /** A model that cannot be used; every call fails with the reason. */
  private record UnavailableModel(String provider, String modelName, String reason)
      implements ModelClient {
    @Override
    public ChatResponse chat(ChatRequest request) {
      throw new ca.helu.pallas.runtime.llm.LlmException(reason);
    }
  }

  private Map<String, String> headers(AgentSpec agent, McpServerSpec server) {
    Map<String, String> out = new LinkedHashMap<>();
    for (HeaderSpec h : server.effectiveHeaders()) {
      if (h.value() != null) {
        out.put(h.name(), h.value());
        continue;
      }
      secrets
          .resolve(h.valueFrom())
          .ifPresentOrElse(
              v -> out.put(h.name(), v),
              () ->
                  LOG.warn(
                      "agent {}: header {} for server {} is not sent: {} is not set",
                      agent.name(),
                      h.name(),
                      server.name(),
                      Secrets.describe(h.valueFrom())));
    }
    return out;
  }

  private record Parts(ModelClient model, List<McpToolServer> servers, HealthMonitor monitor)
      implements AgentParts {
    @Override
    public List<ToolServer> toolServers() {
      return List.copyOf(servers);
    }

    @Override
    public Supplier<HealthReport> health() {
      return monitor::report;
    }

    @Override
    public void close() {
      monitor.close();
      servers.forEach(McpToolServer::close);
    }
  }

  @Override
  public void close() {
    reprobe.shutdownNow();
    for (AutoCloseable c : opened) {
      try {
        c.close();
      } catch (Exception e) {
        // closing anyway
      }
    }
    opened.clear();
  }
}
