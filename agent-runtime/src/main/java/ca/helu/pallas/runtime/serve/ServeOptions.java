package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.runtime.auth.StaticTokens;
import ca.helu.pallas.runtime.http.EdgeLimits;
import ca.helu.pallas.runtime.http.HttpHost;
import ca.helu.pallas.runtime.mcp.TurnLimits;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

/**
 * How {@code serve} runs.
 *
 * @param bindAddress address every listener binds
 * @param onlyAgents serve these agents alone, without the registry (empty: every agent + registry);
 *     several in a pod group's pod (docs/operator.md, "Agents sharing a pod")
 * @param cluster reach other agents by their Kubernetes Service names (docs/operator.md), not on
 *     127.0.0.1, and hand sessions over to other replicas when draining (docs/runtime.md, "Errors
 *     callers see")
 * @param drainTimeout how long shutdown waits for calls in progress
 * @param allowedOrigins browser origins accepted besides localhost
 * @param bodyTimeout how long a request's headers and body may take to arrive before the connection
 *     is closed (a stalled or trickling upload)
 * @param limits what each agent's MCP endpoint holds at once: sessions, requests, body bytes,
 *     connections
 * @param probePort a second port answering /livez and /readyz only, for the kubelet's probes
 *     (docs/runtime.md, "Connections"): ready while every agent served is; only with {@code
 *     onlyAgents} (null: none)
 * @param turns each call's turn deadline, and how soon a client that left is noticed
 *     (docs/runtime.md, "Deadlines and cancellation")
 * @param historyMaxChars the most one conversation's history holds, below what the model reads
 *     (docs/runtime.md, "Conversations and concurrency"; {@code --history-max-chars})
 * @param staticTokens the callers' tokens when the manifest's {@code spec.auth.staticTokens} asks
 *     for them ({@code --static-tokens}, docs/configuration.md), held as digests only; else null
 * @param podIdentity an agent pod's identity, for the agents of its fleet it calls and those that
 *     call it (docs/runtime.md, "Agents calling agents"); null outside a pod
 */
public record ServeOptions(
    String bindAddress,
    List<String> onlyAgents,
    boolean cluster,
    Duration drainTimeout,
    List<String> allowedOrigins,
    Duration bodyTimeout,
    EdgeLimits limits,
    Integer probePort,
    TurnLimits turns,
    long historyMaxChars,
    StaticTokens staticTokens,
    PodIdentity podIdentity) {
  public ServeOptions {
    onlyAgents = List.copyOf(onlyAgents);
    if (probePort != null && onlyAgents.isEmpty()) {
      throw new IllegalArgumentException(
          "--probe-port needs --agent: the probe port answers for the agents of a pod, and serve"
              + " without --agent runs a whole fleet and its registry");
    }
  }

  public static ServeOptions local() {
    return new ServeOptions(
        "0.0.0.0",
        List.of(),
        false,
        Duration.ofSeconds(30),
        List.of(),
        HttpHost.DEFAULT_BODY_TIMEOUT,
        EdgeLimits.DEFAULT,
        null,
        TurnLimits.DEFAULT,
        Long.MAX_VALUE,
        null,
        null);
  }

  public ServeOptions withBindAddress(String address) {
    return with(o -> o.bindAddress = address);
  }

  public ServeOptions withCluster(boolean inCluster) {
    return with(o -> o.cluster = inCluster);
  }

  public ServeOptions withBodyTimeout(Duration timeout) {
    return with(o -> o.bodyTimeout = timeout);
  }

  public ServeOptions withLimits(EdgeLimits edgeLimits) {
    return with(o -> o.limits = edgeLimits);
  }

  public ServeOptions withTurns(TurnLimits turnLimits) {
    return with(o -> o.turns = turnLimits);
  }

  /** Each conversation's history holds at most {@code chars} characters. */
  public ServeOptions withHistoryMaxChars(long chars) {
    return with(o -> o.historyMaxChars = chars);
  }

  /** An agent pod with this identity (docs/runtime.md, "Agents calling agents"). */
  public ServeOptions withPodIdentity(PodIdentity identity) {
    return with(o -> o.podIdentity = identity);
  }

  /** Callers authenticate with these static tokens (spec.auth.staticTokens). */
  public ServeOptions withStaticTokens(StaticTokens tokens) {
    return with(o -> o.staticTokens = tokens);
  }

  /** Serves {@code agent} alone, as in its pod ({@code serve --agent}). */
  public ServeOptions withOnlyAgent(String agent) {
    return withOnlyAgents(List.of(agent));
  }

  /** Serves these agents alone, as a pod group's pod ({@code serve --agent a --agent b}). */
  public ServeOptions withOnlyAgents(List<String> agents) {
    return with(o -> o.onlyAgents = agents);
  }

  /** Serves {@code agent} alone, its probes also on {@code port}. */
  public ServeOptions withProbePort(String agent, int port) {
    return withProbePort(List.of(agent), port);
  }

  /** Serves these agents alone, their probes also on {@code port}. */
  public ServeOptions withProbePort(List<String> agents, int port) {
    return with(o -> {
      o.onlyAgents = agents;
      o.probePort = port;
    });
  }

  /** These options with {@code change} made to a copy of their fields. */
  private ServeOptions with(Consumer<Fields> change) {
    Fields f = new Fields(this);
    change.accept(f);
    return new ServeOptions(
        f.bindAddress,
        f.onlyAgents,
        f.cluster,
        f.drainTimeout,
        f.allowedOrigins,
        f.bodyTimeout,
        f.limits,
        f.probePort,
        f.turns,
        f.historyMaxChars,
        f.staticTokens,
        f.podIdentity);
  }

  /** The record's fields, to change before making new options of them. */
  private static final class Fields {
    String bindAddress;
    List<String> onlyAgents;
    boolean cluster;
    Duration drainTimeout;
    List<String> allowedOrigins;
    Duration bodyTimeout;
    EdgeLimits limits;
    Integer probePort;
    TurnLimits turns;
    long historyMaxChars;
    StaticTokens staticTokens;
    PodIdentity podIdentity;

    Fields(ServeOptions o) {
      bindAddress = o.bindAddress;
      onlyAgents = o.onlyAgents;
      cluster = o.cluster;
      drainTimeout = o.drainTimeout;
      allowedOrigins = o.allowedOrigins;
      bodyTimeout = o.bodyTimeout;
      limits = o.limits;
      probePort = o.probePort;
      turns = o.turns;
      historyMaxChars = o.historyMaxChars;
      staticTokens = o.staticTokens;
      podIdentity = o.podIdentity;
    }
  }
}
