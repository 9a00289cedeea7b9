package ca.helu.pallas.runtime.registry;

import ca.helu.pallas.api.AgentSpec;
import ca.helu.pallas.api.PallasDeploymentSpec;
import ca.helu.pallas.runtime.downstream.McpToolServer;
import ca.helu.pallas.runtime.downstream.McpToolServers;
import ca.helu.pallas.runtime.loop.CallContext;
import ca.helu.pallas.runtime.metrics.PallasMetrics;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The registry's call_tool (docs/runtime.md, "The registry's MCP endpoint"): each tool is called
 * straight at its owner, a downstream server with the headers and bearer rule an agent uses, or an
 * agent with the caller's bearer; one client per owner, kept across calls and replaced when the
 * manifest changes the owner. Each call is counted per server and tool on the registry's /metrics.
 */
final class ToolCalls implements AutoCloseable {
  private record Client(String config, McpToolServer server) {}

  private final McpToolServers factory;
  private final PallasMetrics metrics;
  private final Map<String, Client> clients = new ConcurrentHashMap<>();
  private volatile PallasDeploymentSpec spec;
  private volatile Function<AgentSpec, String> agentUrl;

  ToolCalls(McpToolServers factory, PallasMetrics metrics) {
    this.factory = factory;
    this.metrics = metrics;
  }

  /** The fleet from now on; clients of owners it changed or removed are closed. */
  void update(PallasDeploymentSpec next, Function<AgentSpec, String> urls) {
    this.spec = next;
    this.agentUrl = urls;
    clients
        .entrySet()
        .removeIf(e -> {
          boolean stale = !e.getValue().config().equals(config(e.getKey()));
          if (stale) {
            e.getValue().server().close();
          }
          return stale;
        });
  }

  /** What a client of {@code owner} is built from: when it changes, the client is replaced. */
  private String config(String owner) {
    PallasDeploymentSpec now = spec;
    return now.mcpServer(owner)
        .map(Objects::toString)
        .or(() -> now.agent(owner).map(a -> agentUrl.apply(a) + " auth=" + (now.auth() != null)))
        .orElse("");
  }

  /**
   * Calls {@code tool} with {@code arguments}; the owner's answer, or an isError naming why not.
   */
  McpSchema.CallToolResult call(
      IndexedTool tool, Map<String, Object> arguments, CallContext context) {
    McpToolServer server;
    try {
      server = client(tool.owner());
    } catch (IllegalArgumentException e) {
      return McpSchema.CallToolResult.builder()
          .addTextContent(tool.owner() + " is no longer in the fleet")
          .isError(true)
          .build();
    }
    long started = System.nanoTime();
    McpSchema.CallToolResult result = server.callThrough(tool.toolName(), arguments, context);
    metrics.registryToolCall(
        tool.owner(),
        tool.toolName(),
        !Boolean.TRUE.equals(result.isError()),
        Duration.ofNanos(System.nanoTime() - started));
    return result;
  }

  private McpToolServer client(String owner) {
    String config = config(owner);
    if (config.isEmpty()) {
      throw new IllegalArgumentException(owner);
    }
    return clients
        .compute(
            owner,
            (name, held) -> {
              if (held != null && held.config().equals(config)) {
                return held;
              }
              if (held != null) {
                held.server().close();
              }
              PallasDeploymentSpec now = spec;
              return new Client(
                  config, factory.forRegistry(now, name, agentUrl, now.auth() != null));
            })
        .server();
  }

  @Override
  public void close() {
    clients.values().forEach(c -> c.server().close());
    clients.clear();
  }
}
