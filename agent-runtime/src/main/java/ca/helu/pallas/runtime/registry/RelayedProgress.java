package ca.helu.pallas.runtime.registry;

import ca.helu.pallas.runtime.loop.Progress;
import io.modelcontextprotocol.server.McpAsyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The progress of one call_tool (docs/contract.md, "The registry's MCP endpoint"): what the called
 * tool sends is passed on under the caller's token as it came (progress, total, message); the
 * called tool keeps it increasing for its own token, which is this call's alone. Best effort: a
 * notification that cannot be sent is dropped.
 */
final class RelayedProgress implements Progress {
  private static final Logger LOG = LoggerFactory.getLogger(RelayedProgress.class);
  private static final Duration SEND_TIMEOUT = Duration.ofSeconds(5);

  private final McpAsyncServerExchange exchange;
  private final Object token;

  private RelayedProgress(McpAsyncServerExchange exchange, Object token) {
    this.exchange = exchange;
    this.token = token;
  }

  /** Progress for a call: relayed when it carries a progressToken, nothing otherwise. */
  static Progress forCall(McpAsyncServerExchange exchange, Object token) {
    return token == null ? Progress.NONE : new RelayedProgress(exchange, token);
  }

  @Override
  public synchronized void relayed(double progress, Double total, String message) {
    try {
      exchange
          .progressNotification(new McpSchema.ProgressNotification(token, progress, total, message))
          .block(SEND_TIMEOUT);
    } catch (RuntimeException e) {
      LOG.debug("relaying progress failed: {}", e.toString());
    }
  }

  @Override
  public void relay(String message, boolean finished) {
    // only relayed() is called for a downstream call's notifications
  }

  @Override
  public void step(int step, String kind) {}

  @Override
  public void toolStarted(String server, String tool) {}

  @Override
  public void toolFinished(String server, String tool, boolean ok) {}

  @Override
  public void text(String piece) {}

  @Override
  public void flush() {}
}
