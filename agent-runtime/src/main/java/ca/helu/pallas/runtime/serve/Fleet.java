package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.api.AgentGraph;
import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.PallasDeployment;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.api.PallasNames;
import ca.helu.pallas.runtime.Causes;
import ca.helu.pallas.runtime.auth.InboundAuth;
import ca.helu.pallas.runtime.downstream.Credentials;
import ca.helu.pallas.runtime.downstream.McpToolServers;
import ca.helu.pallas.runtime.http.RequestPool;
import ca.helu.pallas.runtime.loop.AgentLoop;
import ca.helu.pallas.runtime.loop.LoopMetrics;
import ca.helu.pallas.runtime.mcp.AgentCard;
import ca.helu.pallas.runtime.mcp.AgentMcpServer;
import ca.helu.pallas.runtime.mcp.InFlight;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import ca.helu.pallas.runtime.registry.RegistryServer;
import ca.helu.pallas.runtime.store.HistoryStore;
import ca.helu.pallas.runtime.store.MemoryHistoryStore;
import ca.helu.pallas.runtime.store.SessionStores;
import java.net.BindException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A whole PallasDeployment in one process (docs/runtime.md, "Serve mode"): the registry, then
 * agents in dependency waves, each wave ready before the next starts. Or one agent alone.
 */
public final class Fleet implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Fleet.class);

  private final PallasDeployment deployment;
  private final ServeOptions options;
  private final PallasMetrics metrics;
  private final AgentPartsFactory partsFactory;
  private final HistoryStore histories;
  // the requests and body bytes of every agent here come out of one heap: one pool for all
  private final RequestPool pool;
  // every agent's MCP sessions, for the replicas that share the store (docs/runtime.md, Sessions)
  private final SessionStores sessions;
  private final Map<String, AgentHost> agents = new ConcurrentHashMap<>();
  private final FleetIdentities identities;
  private RegistryServer registry;

  public Fleet(
      PallasDeployment deployment,
      ServeOptions options,
      PallasMetrics metrics,
      AgentPartsFactory partsFactory) {
    this(
        deployment,
        options,
        metrics,
        partsFactory,
        new MemoryHistoryStore(),
        SessionStores.inMemory());
  }

  /**
   * @param histories where the agents' conversation histories live; its owner closes it
   * @param sessions where the agents keep their MCP sessions and their streams' events
   */
  public Fleet(
      PallasDeployment deployment,
      ServeOptions options,
      PallasMetrics metrics,
      AgentPartsFactory partsFactory,
      HistoryStore histories,
      SessionStores sessions) {
    this.sessions = sessions;
    this.deployment = deployment;
    this.options = options;
    this.metrics = metrics;
    this.partsFactory = partsFactory;
    this.histories = histories;
    this.pool = new RequestPool(options.limits());
    this.identities = FleetIdentities.of(deployment, options);
  }

  /**
   * The agents this process serves: the one named by {@code --agent} (an agent pod), else every
   * agent of the deployment. What the process checks and reports is about these alone
   * (docs/metrics.md): an agent pod holds only its own agent's keys (docs/operator.md, "Pods").
   *
   * @throws IllegalArgumentException when {@code --agent} names no agent of the deployment
   */
  public List<AgentSpec> served() {
    if (options.onlyAgent() == null) {
      return spec().effectiveAgents();
    }
    return List.of(
        spec()
            .agent(options.onlyAgent())
            .orElseThrow(() ->
                new IllegalArgumentException(
                    "--agent "
                        + options.onlyAgent()
                        + ": no such agent in "
                        + deployment.name()
                        + " (agents: "
                        + spec().effectiveAgents().stream().map(AgentSpec::name).toList()
                        + ")")));
  }

  private PallasDeploymentSpec spec() {
    return deployment.getSpec();
  }

  /** The URL published for an agent: spec.host (default localhost) and its port. */
  public String publicUrl(AgentSpec agent) {
    String host = spec().host() == null ? "localhost" : spec().host();
    return "http://" + host + ":" + spec().portOf(agent) + "/mcp";
  }

  public String registryUrl() {
    String host = spec().host() == null ? "localhost" : spec().host();
    return "http://"
        + host
        + ":"
        + spec().effectiveRegistry().effectivePort()
        + "/.well-known/mcp/server.json";
  }

  /** The registry's MCP URL, as a client reaches it: its resource identifier (docs/runtime.md). */
  private String registryMcpUrl() {
    if (options.cluster()) {
      return PallasNames.registryMcpUrl(deployment);
    }
    String host = spec().host() == null ? "localhost" : spec().host();
    return "http://" + host + ":" + spec().effectiveRegistry().effectivePort() + "/mcp";
  }

  private String peerUrl(AgentSpec peer) {
    if (options.cluster()) {
      return PallasNames.peerUrl(deployment, peer);
    }
    return "http://127.0.0.1:" + spec().portOf(peer) + "/mcp";
  }

  /** Starts everything; on failure stops what started and rethrows. */
  public Fleet start() {
    try {
      List<AgentSpec> served = served();
      served.forEach(a -> metrics.agentInfo(a.name(), spec().portOf(a)));
      if (options.onlyAgent() != null) {
        startAgent(served.get(0));
        return this;
      }
      registry =
          new RegistryServer(
              new RegistryServer.Options(
                  options.bindAddress(),
                  spec().effectiveRegistry().effectivePort(),
                  this::publicUrl,
                  this::peerUrl,
                  registryMcpUrl(),
                  options.staticTokens(),
                  partsFactory.toolServers(),
                  options.allowedOrigins(),
                  RegistryServer.LINK_TIMEOUT,
                  RegistryServer.LINK_INTERVAL,
                  identities::registryCredentials),
              spec(),
              metrics);
      bind("registry", spec().effectiveRegistry().effectivePort(), registry::start);
      // the original Pallas waits for each dependency's HTTP endpoint; in one process an agent's
      // listener is
      // bound and serving when start() returns, so each wave is ready before the next begins
      for (List<String> wave : AgentGraph.of(spec()).waves()) {
        for (String name : wave) {
          startAgent(spec().agent(name).orElseThrow());
        }
      }
      return this;
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /**
   * An agent's resource identifier (docs/runtime.md, "Inbound authentication"): the MCP URL its
   * callers use, as the registry publishes it.
   */
  private String resourceUrl(AgentSpec agent) {
    return options.cluster() ? PallasNames.agentUrl(deployment, agent) : publicUrl(agent);
  }

  private void startAgent(AgentSpec agent) {
    int port = spec().portOf(agent);
    String resource = resourceUrl(agent);
    InboundAuth auth =
        InboundAuth.of(
                spec().auth(),
                agent.name(),
                resource,
                options.staticTokens(),
                spec().auth() == null ? null : identities.acceptedBy(agent, resource))
            .orElse(null);
    AgentParts parts =
        partsFactory.create(
            spec(),
            agent,
            new McpToolServers.Peers() {
              @Override
              public String url(AgentSpec peer) {
                return peerUrl(peer);
              }

              @Override
              public Credentials credentials(AgentSpec peer) {
                return identities.credentials(agent, peer);
              }
            });
    try {
      AgentLoop loop =
          new AgentLoop(
              agent.name(),
              agent.instruction(),
              parts.model(),
              parts.toolServers(),
              agent.effectiveRequestParams(),
              loopMetrics(metrics),
              ToolSpecifications::of);
      // behind a Service with a shared store, a draining pod serves what still reaches it; with
      // its sessions in its own memory, it hands them over (docs/runtime.md, "Errors callers see")
      boolean shared = options.cluster() && histories.shared();
      InFlight inFlight = new InFlight(shared);
      metrics.sendMessagesInFlight(agent.name(), inFlight::calls);
      AgentMcpServer mcp =
          new AgentMcpServer(
              AgentCard.of(spec(), agent),
              loop,
              agent.effectiveInstanceScope(),
              auth == null
                  ? parts.health()
                  // without the issuer's keys every call is refused, and get_health says why
                  // (docs/runtime.md, "Inbound authentication")
                  : parts.health().degradedBy("Inbound auth: ", auth::problem),
              metrics,
              inFlight,
              options.allowedOrigins(),
              options.limits(),
              options.limits().maxHistoryChars() / served().size(),
              options.historyMaxChars(),
              histories,
              options.turns(),
              sessions,
              spec().callerLimitsOf(agent),
              parts.tracing(),
              parts.catalog());
      AgentHost host =
          new AgentHost(
              agent.name(),
              options.bindAddress(),
              port,
              mcp,
              inFlight,
              metrics,
              parts,
              options.bodyTimeout(),
              pool,
              options.cluster()
                  ? (shared ? DrainMode.SERVE : DrainMode.HAND_OVER)
                  : DrainMode.REFUSE,
              options.probePort(),
              auth);
      listen(agent.name(), port, host);
      if (auth != null) {
        // the issuer is read now rather than at the first token, so get_health tells an
        // unreachable issuer at once; without blocking the start (it may be down)
        Thread.ofVirtual().name("pallas-oidc-discovery-" + agent.name()).start(auth::discover);
        LOG.info(
            "agent {}: callers need a bearer token ({}); resource metadata at {}",
            agent.name(),
            spec().auth().oidc() != null
                ? "OIDC, issuer " + spec().auth().oidc().issuerUrl()
                : "static tokens of " + options.staticTokens().names().size() + " callers",
            auth.metadataUrl());
      }
      agents.put(agent.name(), host);
      LOG.info("agent {} serving on port {}", agent.name(), port);
    } catch (RuntimeException e) {
      parts.close();
      throw e;
    }
  }

  /** Starts an agent's listeners, or none: the one started is stopped if the probe port fails. */
  /** The loop's metrics port on the Prometheus metrics (docs/operations.md, "Metrics"). */
  private static LoopMetrics loopMetrics(PallasMetrics metrics) {
    return new LoopMetrics() {
      @Override
      public void llmTurn(String agent, String model, Map<String, Long> tokensByKind) {
        metrics.llmTurn(agent, model, tokensByKind);
      }

      @Override
      public void toolCall(String agent, String server, boolean ok, Duration took) {
        metrics.toolCall(agent, server, "tool", ok, took);
      }
    };
  }

  private void listen(String agent, int port, AgentHost host) {
    bind("agent " + agent, port, host::start);
    if (options.probePort() != null) {
      try {
        bind("the probes of agent " + agent, options.probePort(), host::startProbes);
      } catch (RuntimeException e) {
        host.stopListening();
        throw e;
      }
    }
  }

  private static void bind(String what, int port, Runnable start) {
    try {
      start.run();
    } catch (RuntimeException e) {
      var bind = Causes.find(e, BindException.class);
      if (bind.isPresent()) {
        throw new IllegalStateException(
            "cannot listen on port " + port + " for " + what + ": " + bind.get().getMessage(), e);
      }
      throw e;
    }
  }

  /** What `serve` prints once everything listens. */
  public List<String> banner() {
    List<String> lines = new ArrayList<>();
    if (registry != null) {
      lines.add("registry: " + registryUrl());
    }
    for (AgentSpec agent : spec().effectiveAgents()) {
      if (agents.containsKey(agent.name())) {
        lines.add("agent " + agent.name() + ": " + publicUrl(agent));
      }
    }
    return lines;
  }

  /** Refuses new calls, waits for running ones, then stops every listener. */
  public void drainAndClose(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (AgentHost host : agents.values()) {
      try {
        long left = Math.max(0, deadline - System.nanoTime());
        if (!host.drain(Duration.ofNanos(left))) {
          LOG.warn(
              "agent {}: calls still running after {}; stopping anyway", host.agent(), timeout);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    close();
  }

  @Override
  public void close() {
    // the registry first: its links to the agents end before the agents do
    if (registry != null) {
      registry.close();
      registry = null;
    }
    agents.values().forEach(AgentHost::close);
    agents.clear();
  }
}
