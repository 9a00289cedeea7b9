package ca.helu.pallas.runtime.mcp;

import ca.helu.pallas.runtime.http.McpEdgeFilter;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import java.lang.reflect.Field;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The MCP transport's sessions (docs/runtime.md, "Sessions"): counted against the agent's cap, and
 * closed and removed once idle, so their memory is freed and a later call on one is answered 404,
 * the specification's "session gone". At the cap a new session takes the place of the oldest idle
 * one, the same caller's first, so a flood of initialize from one client closes its own sessions
 * and locks nobody else out; it is refused only while every session is busy.
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
  // the address that initialized each session, until the identity of callers is known
  private final Map<String, String> callers = new ConcurrentHashMap<>();
  private final int max;
  private final long idleNanos;
  private final Consumer<String> expired;
  private final ScheduledFuture<?> sweeps;
  private int starting; // initializes admitted and not yet answered; guarded by this

  /**
   * @param expired told the id of each session closed here (idle, or making room for another)
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
  public synchronized boolean reserve(String caller) {
    if (live.size() + starting >= max && !closeOldestIdle(caller)) {
      return false;
    }
    starting++;
    return true;
  }

  @Override
  public synchronized void release() {
    starting--;
  }

  @Override
  public boolean known(String session) {
    return live.containsKey(session);
  }

  /** An initialize by {@code caller} (its address) opened this session. */
  void started(String session, String caller) {
    if (session != null && live.containsKey(session)) {
      callers.put(session, caller == null ? "" : caller);
      lastSeen.put(session, System.nanoTime());
    }
  }

  /** A request on this session (null: none) started or ended. */
  void seen(String session) {
    if (session != null && live.containsKey(session)) {
      lastSeen.put(session, System.nanoTime());
    }
  }

  /**
   * Closes the least recently used session without a call in progress or a client listening, the
   * caller's own before any other's; false when every session is busy.
   */
  private boolean closeOldestIdle(String caller) {
    List<Candidate> idle = new ArrayList<>();
    live.forEach((id, session) -> {
      if (!session.hasOpenStream() && !session.hasListeningStream()) {
        idle.add(new Candidate(id, callers.get(id), lastSeen.getOrDefault(id, Long.MIN_VALUE)));
      }
    });
    String oldest = oldestIdle(idle, caller);
    if (oldest == null) {
      return false;
    }
    close(oldest, live.get(oldest), "to make room for a new session");
    return true;
  }

  /** An idle session: its id, who opened it, and when it was last used (System.nanoTime). */
  record Candidate(String id, String caller, long lastSeen) {}

  /**
   * The session to close for {@code caller}'s new one: the least recently used of the caller's own
   * idle sessions, else the least recently used of all; null when none is idle.
   */
  static String oldestIdle(List<Candidate> idle, String caller) {
    Comparator<Candidate> order =
        Comparator.<Candidate, Boolean>comparing(c -> !Objects.equals(c.caller(), caller))
            .thenComparingLong(Candidate::lastSeen);
    return idle.stream().min(order).map(Candidate::id).orElse(null);
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
    callers.keySet().retainAll(live.keySet());
    live.forEach((id, session) -> {
      long seen = lastSeen.computeIfAbsent(id, k -> now);
      if (session.hasOpenStream() || session.hasListeningStream()) {
        lastSeen.put(id, now); // a call in progress, or a client listening: not idle
      } else if (now - seen >= idleNanos) {
        close(id, session, "idle for " + (now - seen) / 1_000_000_000 + " s");
      }
    });
  }

  /** Removes and closes a session, forgetting its history. */
  private void close(String id, McpStreamableServerSession session, String why) {
    if (session == null || !live.remove(id, session)) {
      return;
    }
    lastSeen.remove(id);
    callers.remove(id);
    LOG.debug("closing MCP session {}: {}", id, why);
    expired.accept(id);
    session
        .closeGracefully()
        .subscribe(null, e -> LOG.debug("closing session {}: {}", id, e.toString()));
  }

  @Override
  public void close() {
    sweeps.cancel(false);
  }
}
