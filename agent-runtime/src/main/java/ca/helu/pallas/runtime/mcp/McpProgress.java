package ca.helu.pallas.runtime.mcp;

import ca.helu.pallas.runtime.loop.Progress;
import io.modelcontextprotocol.server.McpAsyncServerExchange;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends the progress notifications of docs/contract.md for one call. {@code progress} strictly
 * increases per token (one counter, sent in order under a lock) — unlike fast-agent, whose values
 * restart at 0 for each tool. A notification that cannot be sent is dropped; the call goes on.
 *
 * <p>The LLM's text ({@code {agent} text: …}) is batched: the first piece goes at once, the next
 * ones wait until {@link #TEXT_INTERVAL} after the last text notification, so that a fast model
 * does not send one notification per token; whatever else the call says next (a step, a tool, a
 * relayed message, its result) sends the waiting text first, keeping the order the model wrote.
 */
final class McpProgress implements Progress {
  private static final Logger LOG = LoggerFactory.getLogger(McpProgress.class);
  private static final Duration SEND_TIMEOUT = Duration.ofSeconds(5);

  /** At most one text notification per call in this time (docs/contract.md, "Progress"). */
  static final Duration TEXT_INTERVAL = Duration.ofMillis(100);

  /** Sends batched text when its time comes; the send itself on a virtual thread (it may block). */
  private static final ScheduledExecutorService TEXT_TIMER = textTimer();

  private static ScheduledExecutorService textTimer() {
    ScheduledThreadPoolExecutor timer =
        new ScheduledThreadPoolExecutor(
            1, Thread.ofPlatform().daemon().name("pallas-progress-text").factory());
    timer.setRemoveOnCancelPolicy(true);
    return timer;
  }

  private final McpAsyncServerExchange exchange;
  private final Object token;
  private final String agent;
  private final ReentrantLock lock = new ReentrantLock();
  private long next; // guarded by lock
  private final StringBuilder text = new StringBuilder(); // guarded by lock: not sent yet
  private long lastTextNanos; // guarded by lock
  private boolean textSent; // guarded by lock
  private ScheduledFuture<?> textDue; // guarded by lock

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

  @Override
  public void text(String piece) {
    lock.lock();
    try {
      text.append(piece);
      if (textDue != null) {
        return; // sent with the batch already waiting
      }
      long wait = textSent ? lastTextNanos + TEXT_INTERVAL.toNanos() - System.nanoTime() : 0;
      if (wait <= 0) {
        sendText();
      } else {
        textDue =
            TEXT_TIMER.schedule(
                () -> Thread.startVirtualThread(this::flush), wait, TimeUnit.NANOSECONDS);
      }
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void flush() {
    lock.lock();
    try {
      sendText();
    } finally {
      lock.unlock();
    }
  }

  /** The text waiting, in one notification (under the lock). */
  private void sendText() {
    if (textDue != null) {
      textDue.cancel(false);
      textDue = null;
    }
    if (text.isEmpty()) {
      return;
    }
    String message = agent + " text: " + text;
    text.setLength(0);
    textSent = true;
    lastTextNanos = System.nanoTime();
    sendNow(message, false);
  }

  private void send(String message, boolean finished) {
    lock.lock();
    try {
      sendText(); // the text the model wrote before this, first
      sendNow(message, finished);
    } finally {
      lock.unlock();
    }
  }

  /** One notification, numbered next (under the lock). */
  private void sendNow(String message, boolean finished) {
    try {
      double progress = next++;
      Double total = finished ? progress : null;
      exchange
          .progressNotification(new McpSchema.ProgressNotification(token, progress, total, message))
          .block(SEND_TIMEOUT);
    } catch (RuntimeException e) {
      LOG.debug("progress notification dropped: {}", e.getMessage());
    }
  }
}
