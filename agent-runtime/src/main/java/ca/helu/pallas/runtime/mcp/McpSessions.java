package ca.helu.pallas.runtime.mcp;

import ca.helu.pallas.runtime.http.McpEdgeFilter;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MCP transport's sessions (docs/runtime.md, "Conversations and concurrency"): counted against
 * the agent's cap, and closed and removed once idle, so their memory is freed and a later call on
 * one is answered 404, the specification's "session gone".
 *
 * <p>The SDK (2.1) offers neither a count nor an exact expiry: its own sweeper measures idleness
 * from the start of a session's last request, so it can close a session right after a call longer
 * than its interval. So this reads the transport's session map, once, and expires by the last
 * request's start or end, or a stream still open.
 */
final class McpSessions implements McpEdgeFilter.Sessions, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(McpSessions.class);
  private static final ScheduledExecutorService SWEEPER =
      Executors.newSingleThreadScheduledExecutor(
          Thread.ofPlatform().daemon().name("pallas-session-expiry").factory());

  private final Map<String, McpStreamableServerSession> live;
  private final Map<String, Long> lastSeen = new ConcurrentHashMap<>();
  private final int max;
  private final long idleNanos;
  private final Consumer<String> expired;
  private final ScheduledFuture<?> sweeps;
  private int starting; // initializes admitted and not yet answered; guarded by this

  /**
   * @param expired told the id of each session closed for idleness
   */
  McpSessions(
      HttpServletStreamableServerTransportProvider transport,
      int max,
      Duration idle,
      Consumer<String> expired) {
    this.live = sessionsOf(transport);
    this.max = max;
    this.idleNanos = idle.toNanos();
    this.expired = expired;
    long every = Math.max(10, Math.min(idle.toMillis() / 4, 60_000));
    this.sweeps = SWEEPER.scheduleWithFixedDelay(this::sweep, every, every, TimeUnit.MILLISECONDS);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, McpStreamableServerSession> sessionsOf(
      HttpServletStreamableServerTransportProvider transport) {
    try {
      Field sessions =
          HttpServletStreamableServerTransportProvider.class.getDeclaredField("sessions");
      sessions.setAccessible(true);
      return (Map<String, McpStreamableServerSession>) sessions.get(transport);
    } catch (ReflectiveOperationException | RuntimeException e) {
      throw new IllegalStateException("this MCP SDK keeps no session map Pallas can bound", e);
    }
  }

  /** Sessions the transport holds. */
  int count() {
    return live.size();
  }

  @Override
  public synchronized boolean reserve() {
    if (live.size() + starting >= max) {
      return false;
    }
    starting++;
    return true;
  }

  @Override
  public synchronized void release() {
    starting--;
  }

  /** A request on this session (null: none) started or ended. */
  void seen(String session) {
    if (session != null && live.containsKey(session)) {
      lastSeen.put(session, System.nanoTime());
    }
  }

  private void sweep() {
    try {
      expireIdle();
    } catch (RuntimeException e) {
      LOG.warn("expiring idle MCP sessions failed; next time again", e);
    }
  }

  private void expireIdle() {
    long now = System.nanoTime();
    lastSeen.keySet().retainAll(live.keySet()); // deleted by their clients
    live.forEach((id, session) -> {
      long seen = lastSeen.computeIfAbsent(id, k -> now);
      if (session.hasOpenStream() || session.hasListeningStream()) {
        lastSeen.put(id, now); // a call in progress, or a client listening: not idle
      } else if (now - seen >= idleNanos && live.remove(id, session)) {
        lastSeen.remove(id);
        LOG.debug("closing MCP session {}: idle for {} s", id, (now - seen) / 1_000_000_000);
        expired.accept(id);
        session
            .closeGracefully()
            .subscribe(null, e -> LOG.debug("closing idle session {}: {}", id, e.toString()));
      }
    });
  }

  @Override
  public void close() {
    sweeps.cancel(false);
  }
}
