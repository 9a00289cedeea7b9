package ca.helu.pallas.runtime.mcp.session;

import ca.helu.pallas.runtime.http.McpEdgeFilter;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
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
 * The MCP sessions this process holds (docs/runtime.md, "Sessions"), the one place where they are
 * counted, capped and expired: counted against the agent's cap, and closed and removed once idle,
 * so their memory is freed and a later call on one is answered 404, the specification's "session
 * gone". At the cap a new session takes the place of the oldest idle one, the same caller's first,
 * so a flood of initialize from one client closes its own sessions and locks nobody else out; it is
 * refused only while every session is busy. Idleness counts from the end of a session's last
 * request, and a session with a call in progress or a client listening is never idle.
 */
final class LiveSessions implements McpEdgeFilter.Sessions, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LiveSessions.class);
  private static final ScheduledExecutorService SWEEPER =
      Executors.newSingleThreadScheduledExecutor(
          Thread.ofPlatform().daemon().name("pallas-session-expiry").factory());

  /** A session, who opened it (its address, until callers have an identity), its last use. */
  private static final class Live {
    final McpStreamableServerSession session;
    final String caller;
    volatile long lastSeen = System.nanoTime();

    Live(McpStreamableServerSession session, String caller) {
      this.session = session;
      this.caller = caller == null ? "" : caller;
    }

    boolean busy() {
      return session.hasOpenStream() || session.hasListeningStream();
    }
  }

  private final Map<String, Live> live = new ConcurrentHashMap<>();
  private final int max;
  private final long idleNanos;
  private final Consumer<String> expired;
  private final ScheduledFuture<?> sweeps;
  private int starting; // initializes admitted and not yet answered; guarded by this

  /**
   * @param expired told the id of each session closed here (idle, or making room for another)
   */
  LiveSessions(int max, Duration idle, Consumer<String> expired) {
    this.max = max;
    this.idleNanos = idle.toNanos();
    this.expired = expired;
    long every = Math.max(10, Math.min(idle.toMillis() / 4, 60_000));
    this.sweeps = SWEEPER.scheduleWithFixedDelay(this::sweep, every, every, TimeUnit.MILLISECONDS);
  }

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
    return session != null && live.containsKey(session);
  }

  /** A session opened by an initialize from {@code caller}. */
  void add(McpStreamableServerSession session, String caller) {
    live.put(session.getId(), new Live(session, caller));
  }

  /** The session with this id, noted as used now; null when this process holds none. */
  McpStreamableServerSession use(String id) {
    Live session = id == null ? null : live.get(id);
    if (session == null) {
      return null;
    }
    session.lastSeen = System.nanoTime();
    return session.session;
  }

  /** The session's request has been answered: its idleness counts from now. */
  void used(String id) {
    Live session = live.get(id);
    if (session != null) {
      session.lastSeen = System.nanoTime();
    }
  }

  /** Forgets a session its client deleted; false when it was not held. */
  boolean remove(String id) {
    return live.remove(id) != null;
  }

  Collection<McpStreamableServerSession> sessions() {
    return live.values().stream().map(l -> l.session).toList();
  }

  /** Removes every session, for the transport to close them. */
  List<McpStreamableServerSession> clear() {
    List<McpStreamableServerSession> all = new ArrayList<>(sessions());
    live.clear();
    return all;
  }

  /**
   * Closes the least recently used session without a call in progress or a client listening, the
   * caller's own before any other's; false when every session is busy.
   */
  private boolean closeOldestIdle(String caller) {
    List<Candidate> idle = new ArrayList<>();
    live.forEach((id, session) -> {
      if (!session.busy()) {
        idle.add(new Candidate(id, session.caller, session.lastSeen));
      }
    });
    String oldest = oldestIdle(idle, caller);
    if (oldest == null) {
      return false;
    }
    close(oldest, "to make room for a new session");
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
      long now = System.nanoTime();
      live.forEach((id, session) -> {
        if (session.busy()) {
          session.lastSeen = now; // a call in progress, or a client listening: not idle
        } else if (now - session.lastSeen >= idleNanos) {
          close(id, "idle for " + (now - session.lastSeen) / 1_000_000_000 + " s");
        }
      });
    } catch (RuntimeException e) {
      LOG.warn("expiring idle MCP sessions failed; next time again", e);
    }
  }

  /** Removes and closes a session, telling {@code expired}. */
  private void close(String id, String why) {
    Live session = live.remove(id);
    if (session == null) {
      return;
    }
    LOG.debug("closing MCP session {}: {}", id, why);
    expired.accept(id);
    session
        .session
        .closeGracefully()
        .subscribe(null, e -> LOG.debug("closing session {}: {}", id, e.toString()));
  }

  @Override
  public void close() {
    sweeps.cancel(false);
  }
}
