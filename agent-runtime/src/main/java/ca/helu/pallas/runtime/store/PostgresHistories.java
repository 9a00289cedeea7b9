package ca.helu.pallas.runtime.store;

import ca.helu.pallas.api.InstanceScope;
import ca.helu.pallas.runtime.loop.Cancellation;
import ca.helu.pallas.runtime.loop.TurnSlot;
import dev.langchain4j.data.message.ChatMessage;
import dev.langchain4j.data.message.ChatMessageDeserializer;
import dev.langchain4j.data.message.ChatMessageSerializer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One agent's histories in PostgreSQL ({@link PostgresStore}). A turn is appended in one
 * transaction, then the conversation's oldest whole turns past its bound are deleted in the same
 * transaction, so a reader never sees half a turn. A shared agent's turns are serialized across
 * replicas by a PostgreSQL advisory lock held for the turn, after this process's own queue (docs/
 * runtime.md, "Conversations and concurrency").
 */
final class PostgresHistories implements AgentHistories {
  /**
   * How long one wait for the advisory lock lasts before it is asked again (below the socket's).
   */
  static final int LOCK_WAIT_MILLIS = 2_000;

  private static final String SHARED = "";

  private final PostgresStore store;
  private final String agent;
  private final InstanceScope scope;
  private final HistoryBounds bounds;
  private final TurnCache cache;
  private volatile int conversations;
  private volatile long chars;

  PostgresHistories(PostgresStore store, String agent, InstanceScope scope, HistoryBounds bounds) {
    this.store = store;
    this.agent = agent;
    this.scope = scope;
    this.bounds = bounds;
    this.cache = new TurnCache(bounds.agentChars());
  }

  /**
   * Turns of one conversation already parsed: its id, the number of its oldest turn, its turns in
   * order (numbered on from the oldest: appends number them one after another and trimming takes
   * the oldest), and their messages and size together.
   */
  record Cached(
      long id,
      long firstSeq,
      List<List<ChatMessage>> turns,
      List<ChatMessage> messages,
      long chars) {
    long lastSeq() {
      return firstSeq + turns.size() - 1;
    }
  }

  /**
   * Parsed turns of the conversations read lately, within the agent's share of the heap for
   * histories (docs/runtime.md, "Memory"): the least recently read go first.
   */
  static final class TurnCache {
    private final long maxChars;
    private final LinkedHashMap<String, Cached> entries = new LinkedHashMap<>(16, 0.75f, true);
    private long chars;

    TurnCache(long maxChars) {
      this.maxChars = maxChars;
    }

    synchronized Cached get(String key) {
      return entries.get(key);
    }

    synchronized void put(String key, Cached value) {
      remove(key);
      entries.put(key, value);
      chars += value.chars();
      var eldest = entries.entrySet().iterator();
      while (chars > maxChars && eldest.hasNext()) {
        chars -= eldest.next().getValue().chars();
        eldest.remove();
      }
    }

    synchronized void remove(String key) {
      Cached gone = entries.remove(key);
      if (gone != null) {
        chars -= gone.chars();
      }
    }
  }

  private static String key(String session) {
    return session == null ? SHARED : session;
  }

  /**
   * A shared agent's conversation is one across replicas: its turns wait for one another through an
   * advisory lock, on a connection held for the turn. A session's calls reach one replica at a time
   * in practice; its appends are whole either way (each locks the conversation's row), so it takes
   * no lock and holds no connection for the length of a turn.
   */
  @Override
  public Hold hold(String session, Cancellation call, Runnable waitingElsewhere)
      throws StoreException, TurnSlot.Stopped {
    if (scope != InstanceScope.SHARED) {
      return Hold.NONE;
    }
    Connection c = store.connection();
    String lock = "pallas/" + store.deployment() + "/" + agent + "/" + key(session);
    try {
      try (PreparedStatement tryLock =
          c.prepareStatement("SELECT pg_try_advisory_lock(hashtextextended(?, 0))")) {
        tryLock.setString(1, lock);
        if (!single(tryLock)) {
          waitingElsewhere.run();
          waitForLock(c, lock, call);
        }
      }
      store.markUp();
    } catch (SQLException e) {
      close(c);
      if (call.stopped()) {
        throw new TurnSlot.Stopped();
      }
      throw store.failed("could not take the conversation for this turn", e);
    } catch (TurnSlot.Stopped | RuntimeException e) {
      close(c);
      throw e;
    }
    AtomicBoolean held = new AtomicBoolean(true);
    Runnable release =
        () -> {
          if (held.compareAndSet(true, false)) {
            unlock(c, lock);
          }
        };
    // a stopped turn frees the conversation at once, as in this process (TurnSlot)
    Runnable unregister = call.onStop(why -> Thread.startVirtualThread(release));
    return () -> {
      unregister.run();
      release.run();
    };
  }

  /** Waits in PostgreSQL's queue for the lock, a bounded wait at a time, until taken or stopped. */
  private static void waitForLock(Connection c, String lock, Cancellation call)
      throws SQLException, TurnSlot.Stopped {
    try (Statement s = c.createStatement()) {
      s.execute("SET lock_timeout = " + LOCK_WAIT_MILLIS);
    }
    try (PreparedStatement wait =
        c.prepareStatement("SELECT pg_advisory_lock(hashtextextended(?, 0))")) {
      wait.setString(1, lock);
      while (true) {
        if (call.stopped()) {
          throw new TurnSlot.Stopped();
        }
        try {
          wait.execute();
          break;
        } catch (SQLException e) {
          if (!"55P03".equals(e.getSQLState())) { // lock_not_available: ask again
            throw e;
          }
        }
      }
    } finally {
      try (Statement s = c.createStatement()) {
        s.execute("RESET lock_timeout");
      }
    }
  }

  private static void unlock(Connection c, String lock) {
    try (PreparedStatement unlock =
        c.prepareStatement("SELECT pg_advisory_unlock(hashtextextended(?, 0))")) {
      unlock.setString(1, lock);
      unlock.execute();
    } catch (SQLException e) {
      // the lock goes with the connection: closed below, or dropped by the pool as broken
      abort(c);
    } finally {
      close(c);
    }
  }

  private static boolean single(PreparedStatement query) throws SQLException {
    try (ResultSet r = query.executeQuery()) {
      r.next();
      return r.getBoolean(1);
    }
  }

  /**
   * The conversation's messages. Turns already read are taken from this process's cache, and only
   * newer ones are read and parsed: a turn's JSON crosses the network and is parsed once per
   * process, not once per later turn, so a read costs the same however long the conversation is
   * (docs/benchmarks.md, "Conversation store"). Turns trimmed or deleted in the store since are
   * dropped from the front; a conversation deleted and started again has a new id, and is read
   * whole.
   */
  @Override
  public List<ChatMessage> read(String session) throws StoreException {
    try (Connection c = store.connection()) {
      Cached cached = cache.get(key(session));
      List<ChatMessage> messages = cached == null ? null : read(c, session, cached);
      if (messages == null) {
        cache.remove(key(session));
        messages = read(c, session, null);
      }
      store.markUp();
      return messages;
    } catch (SQLException e) {
      throw store.failed("could not be read", e);
    }
  }

  /**
   * The messages: the turns after {@code cached}'s, added to those of its turns the store still
   * has; null when {@code cached} is not of this conversation any more (then it is read whole).
   */
  private List<ChatMessage> read(Connection c, String session, Cached cached) throws SQLException {
    try (PreparedStatement read =
        c.prepareStatement(
            "SELECT c.id, (SELECT min(f.seq) FROM pallas_turn f WHERE f.conversation_id = c.id),"
                + " t.seq, t.messages FROM pallas_conversation c"
                + " LEFT JOIN pallas_turn t ON t.conversation_id = c.id AND t.seq > ?"
                + " WHERE c.deployment = ? AND c.agent = ? AND c.session_id = ?"
                + " AND c.last_turn_at >= now() - ? * interval '1 millisecond'"
                + " ORDER BY t.seq")) {
      read.setLong(1, cached == null ? 0 : cached.lastSeq());
      read.setString(2, store.deployment());
      read.setString(3, agent);
      read.setString(4, key(session));
      read.setLong(5, store.config().ttl().toMillis());
      long id = -1;
      long first = 0;
      List<List<ChatMessage>> newer = new ArrayList<>();
      long expected = cached == null ? -1 : cached.lastSeq() + 1;
      try (ResultSet rows = read.executeQuery()) {
        while (rows.next()) {
          id = rows.getLong(1);
          first = rows.getLong(2); // 0 (SQL null) when the conversation has no turn left
          String json = rows.getString(4);
          if (json == null) {
            continue; // no turn after the cached ones
          }
          long seq = rows.getLong(3);
          if (expected < 0) {
            expected = seq;
          } else if (seq != expected) {
            return null; // not the turns the cache follows on from
          }
          expected++;
          newer.add(ChatMessageDeserializer.messagesFromJson(json));
        }
      }
      if (id < 0 || first == 0) { // no conversation, or none of its turns left
        cache.remove(key(session));
        return List.of();
      }
      List<List<ChatMessage>> turns = new ArrayList<>();
      List<ChatMessage> messages = new ArrayList<>();
      long chars = 0;
      if (cached != null) {
        if (cached.id() != id || first < cached.firstSeq()) {
          return null;
        }
        int dropped = (int) Math.min(first - cached.firstSeq(), cached.turns().size());
        List<List<ChatMessage>> kept = cached.turns().subList(dropped, cached.turns().size());
        turns.addAll(kept);
        if (dropped == 0) {
          messages.addAll(cached.messages());
        } else {
          kept.forEach(messages::addAll);
        }
        chars = cached.chars();
        for (List<ChatMessage> gone : cached.turns().subList(0, dropped)) {
          chars -= MessageSize.chars(gone);
        }
      }
      for (List<ChatMessage> turn : newer) {
        turns.add(turn);
        messages.addAll(turn);
        chars += MessageSize.chars(turn);
      }
      if (turns.isEmpty()) {
        cache.remove(key(session));
        return List.of();
      }
      List<ChatMessage> all = List.copyOf(messages);
      cache.put(key(session), new Cached(id, first, List.copyOf(turns), all, chars));
      return all;
    }
  }

  /** In one statement, so one round trip and one transaction: db/migration V2, pallas_append. */
  @Override
  public void append(String session, String caller, List<ChatMessage> turn) throws StoreException {
    String json = ChatMessageSerializer.messagesToJson(turn);
    try (Connection c = store.connection();
        PreparedStatement append =
            c.prepareStatement("SELECT pallas_append(?, ?, ?, ?, ?, ?, ?, ?)")) {
      append.setString(1, store.deployment());
      append.setString(2, agent);
      append.setString(3, key(session));
      append.setString(4, caller);
      append.setString(5, json);
      append.setLong(6, MessageSize.chars(turn));
      append.setLong(7, bounds.conversationChars());
      append.setLong(8, store.config().ttl().toMillis());
      append.execute();
      store.markUp();
    } catch (SQLException e) {
      throw store.failed("could not store the turn", e);
    }
  }

  @Override
  public void delete(String session) throws StoreException {
    cache.remove(key(session));
    try (Connection c = store.connection();
        PreparedStatement delete =
            c.prepareStatement(
                "DELETE FROM pallas_conversation WHERE deployment = ? AND agent = ?"
                    + " AND session_id = ?")) {
      delete.setString(1, store.deployment());
      delete.setString(2, agent);
      delete.setString(3, key(session));
      delete.executeUpdate();
      store.markUp();
    } catch (SQLException e) {
      throw store.failed("could not delete the history", e);
    }
  }

  /**
   * Kept in the store for its time to live: another replica, or a replacement pod, may serve the
   * session; only this process's parsed copy goes.
   */
  @Override
  public void closed(String session) {
    cache.remove(key(session));
  }

  /** Counted by the store's sweep. */
  void counted(int conversations, long chars) {
    this.conversations = conversations;
    this.chars = chars;
  }

  @Override
  public int held() {
    return conversations;
  }

  @Override
  public long chars() {
    return chars;
  }

  private static void abort(Connection c) {
    try {
      c.abort(Runnable::run);
    } catch (SQLException e) {
      // already gone
    }
  }

  private static void close(Connection c) {
    try {
      c.close();
    } catch (SQLException e) {
      // already gone
    }
  }
}
