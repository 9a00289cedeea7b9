package ca.helu.pallas.runtime.downstream;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.AuthSpec;
import ca.helu.pallas.api.HeaderSpec;
import ca.helu.pallas.api.McpServerSpec;
import ca.helu.pallas.api.OAuthClientSpec;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.api.TokenExchangeSpec;
import ca.helu.pallas.runtime.auth.TokenExchange;
import ca.helu.pallas.runtime.config.Secrets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The clients of the servers an agent calls, from the manifest: downstream MCP servers with their
 * headers (secrets resolved) and credentials (docs/runtime.md, "Downstream credentials"), and peer
 * agents, whose agent-named tool alone the model sees.
 */
public final class McpToolServers {
  private static final Logger LOG = LoggerFactory.getLogger(McpToolServers.class);

  /** How long one request to the issuer (a token exchange) may take. */
  static final Duration ISSUER_TIMEOUT = Duration.ofSeconds(5);

  /** How an agent reaches the other agents of its fleet it calls. */
  public interface Peers {
    /** Where {@code peer}'s /mcp is. */
    String url(AgentSpec peer);

    /** What the agent's requests to {@code peer} carry to say who asks. */
    Credentials credentials(AgentSpec peer);
  }

  private final Secrets secrets;
  private final Duration peerTimeout;

  public McpToolServers(Secrets secrets, Duration peerTimeout) {
    this.secrets = secrets;
    this.peerTimeout = peerTimeout;
  }

  public List<McpToolServer> of(PallasDeploymentSpec spec, AgentSpec agent, Peers peers) {
    List<McpToolServer> servers = new ArrayList<>();
    for (String name : agent.effectiveServers()) {
      servers.add(toolServer(spec, agent, name, peers));
    }
    return List.copyOf(servers);
  }

  private McpToolServer toolServer(
      PallasDeploymentSpec spec, AgentSpec agent, String name, Peers peers) {
    McpServerSpec server = spec.mcpServer(name).orElse(null);
    if (server != null) {
      Map<String, String> headers = headers(agent, server);
      return new McpToolServer(
          name,
          server.url(),
          headers,
          credentials(spec.auth(), "agent " + agent.name(), server, headers),
          Duration.ofSeconds(server.effectiveTimeoutSeconds()),
          tool -> true,
          server.effectiveMaxConcurrentCalls());
    }
    AgentSpec peer = spec.agent(name).orElseThrow();
    // a peer agent is no mcpServers entry: it gets the default bound, below the requests a peer
    // answers at once (docs/runtime.md, Limits)
    return new McpToolServer(
        name,
        peers.url(peer),
        Map.of(),
        peers.credentials(peer),
        peerTimeout,
        peer.name()::equals,
        McpServerSpec.DEFAULT_MAX_CONCURRENT_CALLS);
  }

  /**
   * A server's credentials: a token exchanged for the caller's, or the caller's own unless an
   * Authorization header is configured (it wins), or none beside its headers.
   *
   * @param who names the caller in warnings
   */
  private Credentials credentials(
      AuthSpec auth, String who, McpServerSpec server, Map<String, String> headers) {
    TokenExchangeSpec exchange = server.tokenExchange();
    if (exchange != null) {
      // validation made sure of the issuer and its client (api validation.Rules)
      String issuer = auth.oidc().issuerUrl();
      OAuthClientSpec client = auth.oidc().client();
      return secrets
          .resolve(client.secret())
          .map(secret ->
              Credentials.exchange(
                  new TokenExchange(
                      issuer,
                      client.id(),
                      secret,
                      exchange.audience(),
                      exchange.resource(),
                      new LinkedHashSet<>(exchange.effectiveScopes()),
                      ISSUER_TIMEOUT)))
          .orElseGet(() -> {
            String why =
                "the agents' client secret ("
                    + Secrets.describe(client.secret())
                    + ") is not set: no token can be exchanged for "
                    + server.name();
            LOG.warn("{}: {}", who, why);
            return Credentials.refused(why);
          });
    }
    boolean ownAuthorization =
        headers.keySet().stream().anyMatch("Authorization"::equalsIgnoreCase);
    return server.effectiveForwardInboundAuth() && !ownAuthorization
        ? Credentials.forward()
        : Credentials.NONE;
  }

  /**
   * The client the registry calls a tool of {@code owner} through (docs/runtime.md, "The registry's
   * MCP endpoint"): a downstream server with its headers and credentials, as an agent calls it, or
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
      Map<String, String> headers = headers("registry", server);
      return new McpToolServer(
          owner,
          server.url(),
          headers,
          credentials(spec.auth(), "registry", server, headers),
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
        forwardToAgents ? Credentials.forward() : Credentials.NONE,
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
