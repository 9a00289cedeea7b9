package ca.helu.pallas.runtime.mcp.session;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerTransport;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * The answer to a request that streams nothing before its response (every request but {@code
 * tools/call}): one JSON-RPC response, written as {@code application/json} once the request is
 * handled (MCP 2025-11-25, "Transports", sending messages to the server: the server answers a
 * request with either an SSE stream or one JSON object; docs/contract.md, "Streams").
 *
 * <p>A JSON body has no event-size limit in the clients: the official Python SDK reads an SSE event
 * of at most 1 MiB by default, less than a long history's prompt or resource. Nothing of it is kept
 * in the event store, since a read is simply asked again.
 *
 * <p>Such a request's handlers send nothing else: a notification sent on it is dropped, and a
 * request to the client fails at once, as there is no stream to carry it.
 */
final class JsonAnswer implements McpStreamableServerTransport {
  private static final Logger LOG = LoggerFactory.getLogger(JsonAnswer.class);

  private final McpJsonMapper json;
  private final String session;
  private volatile McpSchema.JSONRPCResponse response;

  JsonAnswer(McpJsonMapper json, String session) {
    this.json = json;
    this.session = session;
  }

  @Override
  public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
    return sendMessage(message, null);
  }

  @Override
  public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message, String messageId) {
    return switch (message) {
      case McpSchema.JSONRPCResponse answer -> Mono.fromRunnable(() -> response = answer);
      case McpSchema.JSONRPCRequest request ->
          Mono.error(
              new IllegalStateException(
                  "a request of session "
                      + session
                      + " answered as JSON cannot carry "
                      + request.method()));
      default -> {
        LOG.debug("a message for session {} on a JSON answer; dropped", session);
        yield Mono.empty();
      }
    };
  }

  /** Writes the response; false when the request was answered with none. */
  boolean write(HttpServletResponse to) throws IOException {
    McpSchema.JSONRPCResponse answer = response;
    if (answer == null) {
      return false;
    }
    write(to, json, answer);
    return true;
  }

  /** {@code message} as the whole body of a 200 {@code application/json} answer. */
  static void write(HttpServletResponse to, McpJsonMapper json, McpSchema.JSONRPCMessage message)
      throws IOException {
    byte[] body = json.writeValueAsString(message).getBytes(StandardCharsets.UTF_8);
    to.setStatus(200);
    to.setContentType("application/json");
    to.setCharacterEncoding("UTF-8");
    to.setContentLength(body.length);
    to.getOutputStream().write(body);
    to.getOutputStream().flush();
  }

  @Override
  public <T> T unmarshalFrom(Object data, TypeRef<T> type) {
    return json.convertValue(data, type);
  }

  @Override
  public Mono<Void> closeGracefully() {
    return Mono.empty();
  }
}
