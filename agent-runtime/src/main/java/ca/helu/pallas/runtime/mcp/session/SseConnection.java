package ca.helu.pallas.runtime.mcp.session;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerTransport;
import jakarta.servlet.AsyncContext;
import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * One open SSE response (a POST's response stream or a GET's listening stream), as the SDK's
 * session writes to it: each JSON-RPC message one {@code message} event. Written under a lock, so
 * that two messages of one stream never interleave; a write that fails closes the connection.
 */
final class SseConnection implements McpStreamableServerTransport {
  private static final Logger LOG = LoggerFactory.getLogger(SseConnection.class);

  private final String session;
  private final AsyncContext async;
  private final PrintWriter writer;
  private final McpJsonMapper json;
  private final ReentrantLock lock = new ReentrantLock();
  private volatile boolean closed;

  SseConnection(String session, AsyncContext async, PrintWriter writer, McpJsonMapper json) {
    this.session = session;
    this.async = async;
    this.writer = writer;
    this.json = json;
  }

  @Override
  public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message) {
    return sendMessage(message, null);
  }

  @Override
  public Mono<Void> sendMessage(McpSchema.JSONRPCMessage message, String messageId) {
    return Mono.fromRunnable(() -> send(message, messageId == null ? session : messageId));
  }

  private void send(McpSchema.JSONRPCMessage message, String eventId) {
    lock.lock();
    try {
      if (closed) {
        LOG.debug("a message for session {} after its stream closed; dropped", session);
        return;
      }
      writer.write(
          "id: "
              + eventId
              + "\nevent: message\ndata: "
              + json.writeValueAsString(message)
              + "\n\n");
      writer.flush();
      if (writer.checkError()) {
        throw new IOException("the client is gone");
      }
    } catch (IOException e) {
      LOG.debug("writing to a stream of session {} failed: {}", session, e.toString());
      close();
      throw new IllegalStateException("the stream of session " + session + " is closed", e);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public <T> T unmarshalFrom(Object data, TypeRef<T> type) {
    return json.convertValue(data, type);
  }

  @Override
  public Mono<Void> closeGracefully() {
    return Mono.fromRunnable(this::close);
  }

  @Override
  public void close() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      async.complete();
    } catch (RuntimeException e) {
      LOG.debug("completing a stream of session {}: {}", session, e.toString());
    } finally {
      lock.unlock();
    }
  }
}
