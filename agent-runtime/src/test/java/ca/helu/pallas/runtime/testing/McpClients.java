package ca.helu.pallas.runtime.testing;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/** Official Java SDK clients for tests: the way any MCP client talks to an agent. */
public final class McpClients {
  private McpClients() {}

  public static McpSyncClient connect(String mcpUrl) {
    return connect(mcpUrl, null, n -> {});
  }

  /** A client sending {@code Authorization: Bearer <bearer>} (when not null). */
  public static McpSyncClient connect(
      String mcpUrl, String bearer, Consumer<McpSchema.ProgressNotification> progress) {
    int slash = mcpUrl.indexOf('/', "http://".length());
    HttpRequest.Builder request = HttpRequest.newBuilder();
    if (bearer != null) {
      request.header("Authorization", "Bearer " + bearer);
    }
    var transport =
        HttpClientStreamableHttpTransport.builder(mcpUrl.substring(0, slash))
            .endpoint(mcpUrl.substring(slash))
            .requestBuilder(request)
            .build();
    McpSyncClient client =
        McpClient.sync(transport)
            .requestTimeout(Duration.ofSeconds(60))
            .progressConsumer(progress)
            .build();
    client.initialize();
    return client;
  }

  /**
   * A client told of each subscribed resource's update, with what it read again on being told (the
   * SDK's client re-reads a resource when it hears it changed).
   */
  public static McpSyncClient watching(
      String mcpUrl, Consumer<List<McpSchema.ResourceContents>> updates) {
    int slash = mcpUrl.indexOf('/', "http://".length());
    var transport =
        HttpClientStreamableHttpTransport.builder(mcpUrl.substring(0, slash))
            .endpoint(mcpUrl.substring(slash))
            .build();
    McpSyncClient client =
        McpClient.sync(transport)
            .requestTimeout(Duration.ofSeconds(60))
            .resourcesUpdateConsumer(updates)
            .build();
    client.initialize();
    return client;
  }

  /** The text of the resource {@code uri} as {@code client} reads it now (one text content). */
  public static String resourceText(McpSyncClient client, String uri) {
    return ((McpSchema.TextResourceContents)
            client.readResource(new McpSchema.ReadResourceRequest(uri)).contents().get(0))
        .text();
  }

  public static McpSchema.CallToolResult send(McpSyncClient client, String tool, String message) {
    return client.callTool(new McpSchema.CallToolRequest(tool, Map.of("message", message)));
  }

  /** Calls with a progressToken and returns the notifications for it, in arrival order. */
  public static List<McpSchema.ProgressNotification> progressOf(
      List<McpSchema.ProgressNotification> all, Object token) {
    return all.stream().filter(n -> token.equals(n.progressToken())).toList();
  }

  public static List<McpSchema.ProgressNotification> newProgressLog() {
    return new CopyOnWriteArrayList<>();
  }

  public static String text(McpSchema.CallToolResult result) {
    return ((McpSchema.TextContent) result.content().get(0)).text();
  }
}
