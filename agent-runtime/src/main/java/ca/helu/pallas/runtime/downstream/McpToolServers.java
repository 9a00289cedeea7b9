package ca.helu.pallas.runtime.downstream;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.HeaderSpec;
import ca.helu.pallas.api.McpServerSpec;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.runtime.config.Secrets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The clients of the servers an agent calls, from the manifest: downstream MCP servers with their
 * headers (secrets resolved), and peer agents, whose agent-named tool alone the model sees.
 */
public final class McpToolServers {
  private static final Logger LOG = LoggerFactory.getLogger(McpToolServers.class);

  private final Secrets secrets;
  private final Duration peerTimeout;

  public McpToolServers(Secrets secrets, Duration peerTimeout) {
    this.secrets = secrets;
    this.peerTimeout = peerTimeout;
  }

  /**
   * @param peerUrl where the agent reaches another agent's /mcp
   */
  public List<McpToolServer> of(
      PallasDeploymentSpec spec, AgentSpec agent, Function<AgentSpec, String> peerUrl) {
    List<McpToolServer> servers = new ArrayList<>();
    for (String name : agent.effectiveServers()) {
      servers.add(toolServer(spec, agent, name, peerUrl));
    }
    return List.copyOf(servers);
  }

  private McpToolServer toolServer(
      PallasDeploymentSpec spec,
      AgentSpec agent,
      String name,
      Function<AgentSpec, String> peerUrl) {
    McpServerSpec server = spec.mcpServer(name).orElse(null);
    if (server != null) {
      return new McpToolServer(
          name,
          server.url(),
          headers(agent, server),
          server.effectiveForwardInboundAuth(),
          Duration.ofSeconds(server.effectiveTimeoutSeconds()),
          tool -> true,
          server.effectiveMaxConcurrentCalls());
    }
    AgentSpec peer = spec.agent(name).orElseThrow();
    // a peer agent is no mcpServers entry: it gets the default bound, below the requests a peer
    // answers at once (docs/runtime.md, Limits)
    return new McpToolServer(
        name,
        peerUrl.apply(peer),
        Map.of(),
        false,
        peerTimeout,
        peer.name()::equals,
        McpServerSpec.DEFAULT_MAX_CONCURRENT_CALLS);
  }

  /**
   * The client the registry calls a tool of {@code owner} through (docs/runtime.md, "The registry's
   * MCP endpoint"): a downstream server with its headers and bearer rule, as an agent calls it, or
   * an agent at {@code agentUrl}, to which the caller's bearer goes when {@code forwardToAgents}
   * (the fleet asks for tokens: the agent checks the caller's as any call's).
   *
   * @throws IllegalArgumentException when {@code owner} is neither
   */
  public McpToolServer forRegistry(
      PallasDeploymentSpec spec,
      String owner,
      Function<AgentSpec, String> agentUrl,
      boolean forwardToAgents) {
    McpServerSpec server = spec.mcpServer(owner).orElse(null);
    if (server != null) {
      return new McpToolServer(
          owner,
          server.url(),
          headers("registry", server),
          server.effectiveForwardInboundAuth(),
          Duration.ofSeconds(server.effectiveTimeoutSeconds()),
          tool -> true,
          server.effectiveMaxConcurrentCalls());
    }
    AgentSpec agent =
        spec.agent(owner)
            .orElseThrow(() -> new IllegalArgumentException("no agent or server " + owner));
    return new McpToolServer(
        owner,
        agentUrl.apply(agent),
        Map.of(),
        forwardToAgents,
        peerTimeout,
        tool -> true,
        McpServerSpec.DEFAULT_MAX_CONCURRENT_CALLS);
  }

  private Map<String, String> headers(AgentSpec agent, McpServerSpec server) {
    return headers("agent " + agent.name(), server);
  }

  /** {@code server}'s headers, secrets read; {@code who} names the caller in warnings. */
  private Map<String, String> headers(String who, McpServerSpec server) {
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
                      "{}: header {} for server {} is not sent: {} is not set",
                      who,
                      h.name(),
                      server.name(),
                      Secrets.describe(h.valueFrom())));
    }
    return out;
  }
}
