package ca.helu.pallas.runtime.downstream;

import ca.helu.pallas.runtime.loop.Cancellation;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.common.McpTransportContext;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.util.context.Context;

/**
 * One downstream tool call as it went out, so that it can be cancelled there when the call that
 * made it stops (docs/runtime.md, "Deadlines and cancellation"): MCP's {@code
 * notifications/cancelled} with the request's JSON-RPC id, on the same session. The SDK's client
 * (2.1) neither tells a request its id nor sends a cancel; its transport's request customizer sees
 * each POST body, so the id is read from the tools/call body it recorded.
 */
final class DownstreamCancel {
  private static final Logger LOG = LoggerFactory.getLogger(DownstreamCancel.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  static final String METHOD = "notifications/cancelled";

  private volatile String body;

  /** A POST of the call went out with {@code json} (the tools/call request is its last). */
  void posted(String json) {
    this.body = json;
  }

  /**
   * Tells the server that {@code via} talks to that the tools/call request sent is cancelled, for
   * {@code why}; nothing when none was sent. Best effort: the answer is not awaited.
   */
  void cancel(
      HttpClientStreamableHttpTransport via,
      McpTransportContext context,
      Cancellation.Reason why,
      String server) {
    Object id = requestId(body);
    if (via == null || id == null) {
      return;
    }
    var notification =
        new McpSchema.JSONRPCNotification(
            METHOD, Map.of("requestId", id, "reason", "the caller's call stopped: " + why.words()));
    via.sendMessage(notification)
        .contextWrite(Context.of(McpTransportContext.KEY, context))
        .subscribe(
            done -> {},
            e -> LOG.debug("cancelling a call on {} failed: {}", server, e.toString()),
            () -> LOG.debug("cancelled a call on {}: {}", server, why.words()));
  }

  /** The JSON-RPC id of a tools/call request body, or null. */
  static Object requestId(String json) {
    if (json == null) {
      return null;
    }
    try {
      JsonNode message = JSON.readTree(json);
      JsonNode id = message.get("id");
      if (!"tools/call".equals(message.path("method").asText(null))
          || id == null
          || !(id.isTextual() || id.isIntegralNumber())) {
        return null;
      }
      return id.isTextual() ? id.asText() : id.numberValue();
    } catch (IOException e) {
      return null;
    }
  }
}
