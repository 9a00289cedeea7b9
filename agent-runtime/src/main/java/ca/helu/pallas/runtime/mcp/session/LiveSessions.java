package ca.helu.pallas.runtime.mcp.session;

import ca.helu.pallas.runtime.http.EdgeSessions;
import ca.helu.pallas.runtime.store.SessionStore;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import java.time.Duration;
import java.time.Instant;
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
 * counted, capped and expired, each also kept in the {@link SessionStore}, so that a session
 * another replica opened is re-created here on its first request, and one ended anywhere ends here
 * too: counted against the agent's cap, and closed and removed once idle, so their memory is freed
 * and a later call on one is answered 404, the specification's "session gone". At the cap a new
 * session takes the place of the oldest idle one, the same caller's first, so a flood of initialize
 * from one client closes its own sessions and locks nobody else out; it is refused only while every
 * session is busy. Idleness counts from the end of a session's last request, and a session with a
 * call in progress or a client listening is never idle.
 */
final class LiveSessions implements EdgeSessions, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(LiveSessions.class);
  private static final ScheduledExecutorService SWEEPER =
      Executors.newSingleThreadScheduledExecutor(
          Thread.ofPlatform().daemon().name("pallas-session-expiry").factory());

  /** A session, the address that opened it, the caller it belongs to, its last use. */
  private static final class Live {
    final McpStreamableServerSession session;
    final String caller;
    final String protocolVersion;
    volatile String owner;
    volatile long lastSeen = System.nanoTime();

    Live(McpStreamableServerSession session, String caller, String owner, String protocolVersion) {
      this.session = session;
      this.caller = caller == null ? "" : caller;
      this.owner = owner;
      this.protocolVersion = protocolVersion == null ? "" : protocolVersion;
    }

    boolean busy() {
      return session.hasOpenStream() || session.hasListeningStream();
    }
  }

  /** Re-creates a stored session in this process. */
  interface Restorer {
    McpStreamableServerSession restore(SessionStore.StoredSession stored);
  }

  /** No room for one more session: every session held is busy. */
  static final class Full extends RuntimeException {
    Full(int max) {
      super(
          "Service Unavailable: this agent holds its maximum of "
              + max
              + " sessions, each of them busy; retry later",
          null,
          false,
          false);
    }
  }

  private final Map<String, Live> live = new ConcurrentHashMap<>();
  private final String agent;
  private final SessionStore store;
  private final int max;
  private final long idleNanos;
  private final Consumer<String> expired;
  private final ScheduledFuture<?> sweeps;
  private int starting; // initializes admitted and not yet answered; guarded by this

  /**
   * @param expired told the id of each session closed here (idle, or making room for another)
   */
  LiveSessions(String agent, SessionStore store, int max, Duration idle, Consumer<String> expired) {
    this.agent = agent;
    this.store = store;
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
    return session != null && (live.containsKey(session) || store.find(agent, session).isPresent());
  }

  /**
   * A session opened here by an initialize, kept in the store.
   *
   * @param caller the client's address
   * @param owner the authenticated caller who opened it; null without a token
   */
  void add(
      McpStreamableServerSession session,
      String caller,
      String owner,
      String initialize,
      String protocolVersion) {
    Instant now = Instant.now();
    store.save(
        new SessionStore.StoredSession(
            agent, session.getId(), initialize, protocolVersion, caller, owner, now, now));
    live.put(session.getId(), new Live(session, caller, owner, protocolVersion));
  }

  /**
   * Whether {@code caller} (null: no token) may use the session (docs/runtime.md, "Inbound
   * authentication"): its owner may; a session without an owner is open to a request without a
   * token, and the first caller with one claims it, on every replica (the store decides between two
   * claiming at once). A session not kept is left to the transport, which answers 404.
   */
  @Override
  public boolean admits(String session, String caller) {
    Live held = live.get(session);
    String owner;
    if (held != null) {
      owner = held.owner;
    } else {
      var stored = store.find(agent, session);
      if (stored.isEmpty()) {
        return true;
      }
      owner = stored.get().owner();
    }
    if (owner != null || caller == null) {
      return owner == null || owner.equals(caller);
    }
    owner = store.claim(agent, session, caller);
    if (held != null) {
      synchronized (held) {
        if (held.owner == null) {
          // the store's answer, or this caller's while the store fails (the session then lives
          // in this replica only)
          held.owner = owner == null ? caller : owner;
        }
        owner = held.owner;
      }
    }
    return caller.equals(owner);
  }

  /**
   * The session with this id, noted as used now: the one held here, else re-created from the store
   * by {@code restorer}; null when it is not kept (never opened, deleted or expired, here or on
   * another replica).
   *
   * @throws Full when it must be re-created and every session held is busy
   */
  McpStreamableServerSession use(String id, Restorer restorer) {
    if (id == null) {
      return null;
    }
    Live held = live.get(id);
    if (held != null) {
      if (!store.touch(agent, id, Instant.now())) {
        // deleted or expired on another replica: it ends here too
        drop(id, held, "ended on another replica", true);
        return null;
      }
      held.lastSeen = System.nanoTime();
      return held.session;
    }
    return restore(id, restorer);
  }

  private synchronized McpStreamableServerSession restore(String id, Restorer restorer) {
    Live held = live.get(id);
    if (held != null) {
      held.lastSeen = System.nanoTime();
      return held.session;
    }
    var stored = store.find(agent, id);
    if (stored.isEmpty()) {
      return null;
    }
    if (live.size() + starting >= max && !closeOldestIdle(stored.get().caller())) {
      throw new Full(max);
    }
    Live restored =
        new Live(
            restorer.restore(stored.get()),
            stored.get().caller(),
            stored.get().owner(),
            stored.get().protocolVersion());
    live.put(id, restored);
    store.touch(agent, id, Instant.now());
    LOG.debug("re-created MCP session {} from the session store", id);
    return restored.session;
  }

  /** The protocol version the session was opened with, once it is held here; "" when unknown. */
  String protocolVersion(String id) {
    Live session = id == null ? null : live.get(id);
    return session == null ? "" : session.protocolVersion;
  }

  /** The session's request has been answered: its idleness counts from now. */
  void used(String id) {
    Live session = live.get(id);
    if (session != null) {
      session.lastSeen = System.nanoTime();
      store.touch(agent, id, Instant.now());
    }
  }

  /** Ends a session its client deleted, here and in the store. */
  void remove(String id) {
    live.remove(id);
    store.delete(agent, id);
  }

  /** The session with this id if this process holds it, without counting it as used. */
  McpStreamableServerSession held(String id) {
    Live held = id == null ? null : live.get(id);
    return held == null ? null : held.session;
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
      Instant cutoff = Instant.now().minusNanos(idleNanos);
      live.forEach((id, session) -> {
        if (session.busy()) {
          // a call in progress, or a client listening: not idle, here or in the store
          session.lastSeen = now;
          store.touch(agent, id, Instant.now());
        } else if (now - session.lastSeen >= idleNanos) {
          if (store.find(agent, id).filter(s -> s.lastUsed().isAfter(cutoff)).isPresent()) {
            // used on another replica meanwhile: only this copy goes
            drop(id, session, "idle here, used on another replica", false);
          } else {
            close(id, "idle for " + (now - session.lastSeen) / 1_000_000_000 + " s");
          }
        }
      });
      // sessions no replica has used for the idle timeout, held here or not
      store.expire(agent, cutoff).forEach(expired);
    } catch (RuntimeException e) {
      LOG.warn("expiring idle MCP sessions failed; next time again", e);
    }
  }

  /** Ends a session here and in the store, telling {@code expired}. */
  private void close(String id, String why) {
    Live session = live.remove(id);
    store.delete(agent, id);
    if (session == null) {
      return;
    }
    LOG.debug("closing MCP session {}: {}", id, why);
    expired.accept(id);
    closeQuietly(id, session);
  }

  /** Lets this process's copy of a session go; {@code ended}: it has ended everywhere. */
  private void drop(String id, Live session, String why, boolean ended) {
    if (live.remove(id, session)) {
      LOG.debug("letting MCP session {} go: {}", id, why);
      if (ended) {
        expired.accept(id);
      }
      closeQuietly(id, session);
    }
  }

  private static void closeQuietly(String id, Live session) {
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
