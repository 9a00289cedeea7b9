package ca.helu.pallas.runtime.registry;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.runtime.auth.InboundAuth;
import ca.helu.pallas.runtime.auth.StaticTokens;
import ca.helu.pallas.runtime.downstream.Credentials;
import ca.helu.pallas.runtime.downstream.McpToolServers;
import ca.helu.pallas.runtime.http.EdgeLimits;
import ca.helu.pallas.runtime.http.HttpHost;
import ca.helu.pallas.runtime.http.RequestPool;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Function;

/**
 * The registry on its port: server.json, the MCP Registry API ({@link RegistryApi}), the registry's
 * MCP endpoint /mcp ({@link RegistryMcp}), /metrics, /livez, /readyz.
 */
public final class RegistryServer implements AutoCloseable {
  /**
   * How the registry is reached and reaches the agents.
   *
   * @param publicUrl the MCP URL published for each agent (server.json)
   * @param linkUrl where the registry itself reaches each agent's /mcp
   * @param mcpUrl the registry's own MCP URL: its resource identifier with inbound authentication
   * @param staticTokens the static tokens, with {@code spec.auth.staticTokens} (else null)
   * @param toolServers the clients call_tool calls through, with the process's secrets
   * @param allowedOrigins browser origins allowed on /mcp besides localhost
   * @param linkTimeout each agent link's request timeout, {@code linkInterval} its ping interval
   * @param linkCredentials what the links' requests to each agent carry, by agent name: the
   *     registry's identity with inbound authentication (docs/runtime.md, "Agents calling agents")
   */
  public record Options(
      String bindAddress,
      int port,
      Function<AgentSpec, String> publicUrl,
      Function<AgentSpec, String> linkUrl,
      String mcpUrl,
      StaticTokens staticTokens,
      McpToolServers toolServers,
      List<String> allowedOrigins,
      Duration linkTimeout,
      Duration linkInterval,
      Function<String, Credentials> linkCredentials) {
    /** These options with the agents followed at this timeout and ping interval (tests). */
    public Options withLinks(Duration timeout, Duration interval) {
      return new Options(
          bindAddress,
          port,
          publicUrl,
          linkUrl,
          mcpUrl,
          staticTokens,
          toolServers,
          allowedOrigins,
          timeout,
          interval,
          linkCredentials);
    }
  }

  /** Each link's request timeout and ping interval by default (docs/runtime.md). */
  public static final Duration LINK_TIMEOUT = RegistryMcp.Links.DEFAULT.timeout();

  public static final Duration LINK_INTERVAL = RegistryMcp.Links.DEFAULT.interval();

  private final RegistryHandler documents;
  private final RegistryApi api;
  private final RegistryMcp mcp;
  private final ToolCalls calls;
  private final HttpHost http;
  private final Options options;

  public RegistryServer(Options options, PallasDeploymentSpec spec, PallasMetrics metrics) {
    this.options = options;
    Instant now = Instant.now();
    this.documents = new RegistryHandler(RegistryDocument.render(spec, options.publicUrl(), now));
    this.api = new RegistryApi(RegistryDocument.entries(spec, options.publicUrl(), now));
    this.calls = new ToolCalls(options.toolServers(), metrics);
    EdgeLimits limits = EdgeLimits.DEFAULT;
    this.mcp =
        new RegistryMcp(
            spec.effectiveVersion(),
            new RegistryMcp.Links(
                options.linkTimeout(), options.linkInterval(), options.linkCredentials()),
            calls,
            options.allowedOrigins(),
            limits);
    metrics.registryIndexedTools(() -> mcp.index().search().size());
    HttpHost.Builder builder = HttpHost.builder(options.bindAddress(), options.port());
    // the agents' rules on the registry's /mcp too (docs/runtime.md, "Inbound authentication"):
    // what only tells is open with openHealth, call_tool needs the caller's token
    InboundAuth.of(spec.auth(), "registry", options.mcpUrl(), options.staticTokens(), null)
        .map(auth -> auth.openingTools(RegistryMcp.OPEN_TOOLS))
        .ifPresent(auth -> builder.auth(auth, "/mcp"));
    this.http =
        builder
            .exact(RegistryHandler.PATH, documents.handler())
            .prefix(RegistryApi.PREFIX, api)
            .limits(new RequestPool(limits), mcp.sessions())
            .servlet("/mcp", mcp.servlet())
            .resources(mcp::hasResource)
            .health("/metrics", HttpHost.metrics(PallasMetrics::contentType, metrics::scrape))
            .health("/livez", HttpHost.probe(() -> true))
            .health("/readyz", HttpHost.probe(() -> true))
            .build();
    follow(spec);
  }

  public RegistryServer start() {
    http.start();
    return this;
  }

  public int port() {
    return http.port();
  }

  /** Publishes a new set of agents; the next request sees it, and the index follows it. */
  public void update(PallasDeploymentSpec spec) {
    Instant now = Instant.now();
    documents.update(RegistryDocument.render(spec, options.publicUrl(), now));
    api.update(RegistryDocument.entries(spec, options.publicUrl(), now));
    follow(spec);
  }

  private void follow(PallasDeploymentSpec spec) {
    calls.update(spec, options.linkUrl());
    mcp.follow(
        spec.effectiveAgents().stream()
            .map(a -> new FleetIndex.Target(a.name(), options.linkUrl().apply(a)))
            .toList());
  }

  @Override
  public void close() {
    try {
      mcp.close();
    } finally {
      http.close();
    }
  }
}
