package ca.helu.pallas.runtime.serve;

import ca.helu.pallas.runtime.auth.StaticTokens;
import ca.helu.pallas.runtime.http.EdgeLimits;
import ca.helu.pallas.runtime.http.HttpHost;
import ca.helu.pallas.runtime.mcp.TurnLimits;
import java.time.Duration;
import java.util.List;

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
    return new ServeOptions(
        address,
        onlyAgents,
        cluster,
        drainTimeout,
        allowedOrigins,
        bodyTimeout,
        limits,
        probePort,
        turns,
        historyMaxChars,
        staticTokens,
        podIdentity);
  }

  public ServeOptions withCluster(boolean inCluster) {
    return new ServeOptions(
        bindAddress,
        onlyAgents,
        inCluster,
        drainTimeout,
        allowedOrigins,
        bodyTimeout,
        limits,
        probePort,
        turns,
        historyMaxChars,
        staticTokens,
        podIdentity);
  }

  public ServeOptions withBodyTimeout(Duration timeout) {
    return new ServeOptions(
        bindAddress,
        onlyAgents,
        cluster,
        drainTimeout,
        allowedOrigins,
        timeout,
        limits,
        probePort,
        turns,
        historyMaxChars,
        staticTokens,
        podIdentity);
  }

  public ServeOptions withLimits(EdgeLimits edgeLimits) {
    return new ServeOptions(
        bindAddress,
        onlyAgents,
        cluster,
        drainTimeout,
        allowedOrigins,
        bodyTimeout,
        edgeLimits,
        probePort,
        turns,
        historyMaxChars,
        staticTokens,
        podIdentity);
  }

  public ServeOptions withTurns(TurnLimits turnLimits) {
    return new ServeOptions(
        bindAddress,
        onlyAgents,
        cluster,
        drainTimeout,
        allowedOrigins,
        bodyTimeout,
        limits,
        probePort,
        turnLimits,
        historyMaxChars,
        staticTokens,
        podIdentity);
  }

  /** Each conversation's history holds at most {@code chars} characters. */
  public ServeOptions withHistoryMaxChars(long chars) {
    return new ServeOptions(
        bindAddress,
        onlyAgents,
        cluster,
        drainTimeout,
        allowedOrigins,
        bodyTimeout,
        limits,
        probePort,
        turns,
        chars,
        staticTokens,
        podIdentity);
  }

  /** An agent pod with this identity (docs/runtime.md, "Agents calling agents"). */
  public ServeOptions withPodIdentity(PodIdentity identity) {
    return new ServeOptions(
        bindAddress,
        onlyAgents,
        cluster,
        drainTimeout,
        allowedOrigins,
        bodyTimeout,
        limits,
        probePort,
        turns,
        historyMaxChars,
        staticTokens,
        identity);
  }

  /** Callers authenticate with these static tokens (spec.auth.staticTokens). */
  public ServeOptions withStaticTokens(StaticTokens tokens) {
    return new ServeOptions(
        bindAddress,
        onlyAgents,
        cluster,
        drainTimeout,
        allowedOrigins,
        bodyTimeout,
        limits,
        probePort,
        turns,
        historyMaxChars,
        tokens,
        podIdentity);
  }

  /** Serves {@code agent} alone, as in its pod ({@code serve --agent}). */
  public ServeOptions withOnlyAgent(String agent) {
    return withOnlyAgents(List.of(agent));
  }

  /** Serves these agents alone, as a pod group's pod ({@code serve --agent a --agent b}). */
  public ServeOptions withOnlyAgents(List<String> agents) {
    return new ServeOptions(
        bindAddress,
        agents,
        cluster,
        drainTimeout,
        allowedOrigins,
        bodyTimeout,
        limits,
        probePort,
        turns,
        historyMaxChars,
        staticTokens,
        podIdentity);
  }

  /** Serves {@code agent} alone, its probes also on {@code port}. */
  public ServeOptions withProbePort(String agent, int port) {
    return withProbePort(List.of(agent), port);
  }

  /** Serves these agents alone, their probes also on {@code port}. */
  public ServeOptions withProbePort(List<String> agents, int port) {
    return new ServeOptions(
        bindAddress,
        agents,
        cluster,
        drainTimeout,
        allowedOrigins,
        bodyTimeout,
        limits,
        port,
        turns,
        historyMaxChars,
        staticTokens,
        podIdentity);
  }
}
