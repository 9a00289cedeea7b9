package ca.helu.pallas.runtime.mcp;

import ca.helu.pallas.runtime.loop.Progress;
import io.modelcontextprotocol.server.McpAsyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends the progress notifications of docs/contract.md for one call. {@code progress} strictly
 * increases per token (one counter, sent in order under a lock) — unlike fast-agent, whose values
 * restart at 0 for each tool. A notification that cannot be sent is dropped; the call goes on.
 */
final class McpProgress implements Progress {
  private static final Logger LOG = LoggerFactory.getLogger(McpProgress.class);
  private static final Duration SEND_TIMEOUT = Duration.ofSeconds(5);

  private final McpAsyncServerExchange exchange;
  private final Object token;
  private final String agent;
  private final ReentrantLock lock = new ReentrantLock();
  private long next;

  McpProgress(McpAsyncServerExchange exchange, Object token, String agent) {
    this.exchange = exchange;
    this.token = token;
    this.agent = agent;
  }

  /** Progress for a call: notifications when it carries a progressToken, nothing otherwise. */
  static Progress forCall(McpAsyncServerExchange exchange, Object token, String agent) {
    return token == null ? Progress.NONE : new McpProgress(exchange, token, agent);
  }

  @Override
  public void step(int step, String kind) {
    send(agent + " step " + step + " (" + kind + ")", false);
  }

  @Override
  public void toolStarted(String server, String tool) {
    send(server + "/" + tool + ": started", false);
  }

  @Override
  public void toolFinished(String server, String tool, boolean ok) {
    send(server + "/" + tool + (ok ? ": completed" : ": failed"), true);
  }

  @Override
  public void relay(String message, boolean finished) {
    send(message, finished);
  }

  private void send(String message, boolean finished) {
    lock.lock();
    try {
      double progress = next++;
      Double total = finished ? progress : null;
      exchange
          .progressNotification(new McpSchema.ProgressNotification(token, progress, total, message))
          .block(SEND_TIMEOUT);
    } catch (RuntimeException e) {
      LOG.debug("progress notification dropped: {}", e.getMessage());
    } finally {
      lock.unlock();
    }
  }
}
