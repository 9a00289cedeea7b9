package ca.helu.pallas.bench;

import ca.helu.pallas.runtime.http.HttpHost;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;

/**
 * The baseline: the bare MCP Java SDK on the same Undertow setup, one {@code echo} tool, nothing
 * else (PERF-NOTES' reference server). Args: port.
 */
public final class BareSdkServer {
  public static void main(String[] args) throws Exception {
    var json = McpJsonDefaults.getMapper();
    var transport =
        HttpServletStreamableServerTransportProvider.builder()
            .jsonMapper(json)
            .mcpEndpoint("/mcp")
            .build();
    McpServer.sync(transport)
        .serverInfo("bare", "1.0.0")
        .jsonMapper(json)
        .tools(
            McpServerFeatures.SyncToolSpecification.builder()
                .tool(
                    McpSchema.Tool.builder()
                        .name("echo")
                        .description("echo")
                        .inputSchema(
                            json,
                            "{\"type\":\"object\",\"properties\":{\"message\":{\"type\":\"string\"}}}")
                        .build())
                .callHandler((exchange, request) ->
                    McpSchema.CallToolResult.builder()
                        .addTextContent(String.valueOf(request.arguments().get("message")))
                        .build())
                .build())
        .build();
    HttpHost.builder("127.0.0.1", Integer.parseInt(args[0]))
        .servlet("/mcp", transport)
        .exact("/readyz", HttpHost.probe(() -> true))
        .build()
        .start();
    Thread.currentThread().join();
  }
}
