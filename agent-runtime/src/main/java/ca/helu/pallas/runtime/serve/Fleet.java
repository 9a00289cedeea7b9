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
import ca.helu.pallas.runtime.http.HttpHost;
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
import java.util.function.UnaryOperator;
import java.util.stream.Collectors;
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
  // the order the agents started in, which they drain in reverse
  private volatile List<List<String>> waves = List.of();
  private RegistryServer registry;
  private HttpHost probes;

  /**
   * Connections the probe port holds: the kubelet's probes open one each (three kinds, every few
   * seconds) and close it.
   */
  static final int PROBE_CONNECTIONS = 64;

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
   * The agents this process serves, in manifest order: those named by {@code --agent} (an agent
   * pod, or a pod group's), else every agent of the deployment. What the process checks and reports
   * is about these alone (docs/metrics.md): a pod holds only its own agents' keys
   * (docs/operator.md, "Pods").
   *
   * @throws IllegalArgumentException when {@code --agent} names no agent of the deployment
   */
  public List<AgentSpec> served() {
    if (options.onlyAgents().isEmpty()) {
      return spec().effectiveAgents();
    }
    for (String name : options.onlyAgents()) {
      if (spec().agent(name).isEmpty()) {
        throw new IllegalArgumentException(
            "--agent "
                + name
                + ": no such agent in "
                + deployment.name()
                + " (agents: "
                + spec().effectiveAgents().stream().map(AgentSpec::name).toList()
                + ")");
      }
    }
    return spec().effectiveAgents().stream()
        .filter(a -> options.onlyAgents().contains(a.name()))
        .toList();
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

  /**
   * Where an agent calls another: on 127.0.0.1 when this process serves it too (serve mode, or a
   * pod group's pod, where the call then needs neither the pod's readiness nor its Service while
   * the pod starts or drains), else at its Service (docs/operator.md, "Agents sharing a pod").
   */
  private String peerUrl(AgentSpec peer) {
    if (options.cluster() && !options.onlyAgents().contains(peer.name())) {
      return PallasNames.peerUrl(deployment, peer);
    }
    return "http://127.0.0.1:" + spec().portOf(peer) + "/mcp";
  }

  /** Starts everything; on failure stops what started and rethrows. */
  public Fleet start() {
    try {
      List<AgentSpec> served = served();
      served.forEach(a -> metrics.agentInfo(a.name(), spec().portOf(a)));
      if (!options.onlyAgents().isEmpty()) {
        // one pod's agents: those they need elsewhere run in other pods, started first by the
        // operator (docs/operator.md, "Start order")
        startInWaves(
            AgentGraph.of(spec())
                .among(served.stream().map(AgentSpec::name).collect(Collectors.toSet())));
        startProbes();
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
      startInWaves(AgentGraph.of(spec()));
      return this;
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  private void startInWaves(AgentGraph graph) {
    waves = graph.waves();
    for (List<String> wave : waves) {
      for (String name : wave) {
        startAgent(spec().agent(name).orElseThrow());
      }
    }
  }

  /**
   * The probe port's listener (docs/runtime.md, "Connections"), once every agent serves: {@code
   * /livez} while the process runs, {@code /readyz} while every agent it serves is ready. The pod
   * has one readiness, which every Service of its agents follows (docs/operator.md, "Agents sharing
   * a pod").
   */
  private void startProbes() {
    if (options.probePort() == null) {
      return;
    }
    List<AgentHost> hosts = List.copyOf(agents.values());
    probes =
        HttpHost.builder(options.bindAddress(), options.probePort())
            .maxConnections(PROBE_CONNECTIONS)
            .health("/livez", HttpHost.probe(() -> true))
            .health("/readyz", HttpHost.probe(() -> hosts.stream().allMatch(AgentHost::ready)))
            .build();
    bind("the probes", options.probePort(), probes::start);
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
              auth,
              scrapeOf(agent));
      bind("agent " + agent.name(), port, host::start);
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

  /**
   * What an agent's /metrics shows: the whole process's (serve mode, an agent pod), or in a pod
   * that serves several agents its own series, and the process's only on the first agent's port, so
   * that a scraper reaching the pod through each agent's Service counts nothing twice
   * (docs/metrics.md).
   */
  private UnaryOperator<String> scrapeOf(AgentSpec agent) {
    if (options.onlyAgents().size() < 2) {
      return metrics::scrape;
    }
    boolean processWide = served().get(0).equals(agent);
    return contentType -> metrics.scrape(contentType, agent.name(), processWide);
  }

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

  /**
   * Refuses new calls, waits for running ones, then stops every listener, all within {@code
   * timeout}. The agents drain wave by wave in the reverse of their start: those that call others
   * first, so that a call in progress still reaches the agents it calls in this process; the agents
   * of a wave at once, so that one agent's wait does not eat the others' time.
   */
  public void drainAndClose(Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    for (List<String> wave : waves.reversed()) {
      List<Thread> draining = new ArrayList<>();
      for (String name : wave) {
        AgentHost host = agents.get(name);
        if (host != null) {
          draining.add(
              Thread.ofVirtual()
                  .name("pallas-drain-" + name)
                  .start(() -> drain(host, deadline, timeout)));
        }
      }
      try {
        for (Thread t : draining) {
          t.join();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    close();
  }

  private static void drain(AgentHost host, long deadline, Duration timeout) {
    try {
      if (!host.drain(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())))) {
        LOG.warn("agent {}: calls still running after {}; stopping anyway", host.agent(), timeout);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    if (probes != null) {
      probes.close();
      probes = null;
    }
    // the registry first: its links to the agents end before the agents do
    if (registry != null) {
      registry.close();
      registry = null;
    }
    agents.values().forEach(AgentHost::close);
    agents.clear();
  }
}
