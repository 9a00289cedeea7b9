package ca.helu.pallas.runtime.store;

import ca.helu.pallas.api.InstanceScope;
import ca.helu.pallas.runtime.loop.Cancellation;
import dev.langchain4j.data.message.ChatMessage;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * One agent's histories in memory: one for a shared agent, one per MCP session for connection
 * scope. Memory is bounded (docs/runtime.md, "Conversations and concurrency"): each history by its
 * budget, a session's history is forgotten when the session is deleted, closed or has been idle for
 * the idle timeout, and the least recently used sessions go first past the agent's share of the
 * process's history limit (docs/runtime.md, "Memory"; the number of sessions is capped at the edge:
 * {@code mcp.session.LiveSessions}).
 */
final class MemoryHistories implements AgentHistories {
  private static final class Entry {
    final MemoryHistory history;
    long lastUsed;

    Entry(MemoryHistory history) {
      this.history = history;
    }
  }

  private final InstanceScope scope;
  private final long budgetChars;
  private final long maxTotalChars;
  private final long idleNanos;
  private final LongSupplier clock;
  private final MemoryHistory shared;
  // in order of last call, the least recently used first; guarded by itself
  private final LinkedHashMap<String, Entry> bySession = new LinkedHashMap<>();
  private long sessionChars;

  MemoryHistories(InstanceScope scope, HistoryBounds bounds, LongSupplier clock) {
    this.scope = scope;
    this.budgetChars = bounds.conversationChars();
    this.maxTotalChars = bounds.agentChars();
    this.idleNanos = bounds.sessionIdle().toNanos();
    this.clock = clock;
    this.shared = new MemoryHistory(budgetChars);
  }

  /** One process: its turn slot already orders the conversation's turns. */
  @Override
  public Hold hold(String session, Cancellation call, Runnable waitingElsewhere) {
    return Hold.NONE;
  }

  @Override
  public List<ChatMessage> read(String session) {
    // a shared agent's one conversation; with inbound authentication each caller's is kept as a
    // session's is (AgentHistories: the key names the caller)
    if (scope == InstanceScope.SHARED && session == null) {
      return shared.snapshot();
    }
    synchronized (bySession) {
      expire(clock.getAsLong());
      Entry entry = bySession.get(key(session));
      if (entry == null) {
        return List.of();
      }
      touch(session, entry);
      return entry.history.snapshot();
    }
  }

  @Override
  public void append(String session, String caller, List<ChatMessage> turn) {
    if (scope == InstanceScope.SHARED && session == null) {
      shared.append(turn);
      return;
    }
    synchronized (bySession) {
      expire(clock.getAsLong());
      Entry entry = bySession.get(key(session));
      if (entry == null) {
        entry = new Entry(new MemoryHistory(budgetChars));
      }
      touch(session, entry);
      sessionChars += entry.history.append(turn);
      while (sessionChars > maxTotalChars && bySession.size() > 1) {
        evictEldest();
      }
    }
  }

  /** Marks a session's history as the most recently used. */
  private void touch(String session, Entry entry) {
    bySession.remove(key(session));
    entry.lastUsed = clock.getAsLong();
    bySession.put(key(session), entry);
  }

  @Override
  public void delete(String session) {
    closed(session);
  }

  @Override
  public void closed(String session) {
    synchronized (bySession) {
      Entry entry = bySession.remove(key(session));
      if (entry != null) {
        sessionChars -= entry.history.chars();
      }
    }
  }

  @Override
  public int held() {
    return switch (scope) {
      case REQUEST -> 0;
      case SHARED, CONNECTION -> {
        synchronized (bySession) {
          expire(clock.getAsLong());
          yield bySession.size() + (scope == InstanceScope.SHARED ? 1 : 0);
        }
      }
    };
  }

  @Override
  public long chars() {
    return switch (scope) {
      case SHARED -> {
        synchronized (bySession) {
          yield shared.chars() + sessionChars;
        }
      }
      case REQUEST -> 0;
      case CONNECTION -> {
        synchronized (bySession) {
          yield sessionChars;
        }
      }
    };
  }

  private void expire(long now) {
    Iterator<Map.Entry<String, Entry>> eldestFirst = bySession.entrySet().iterator();
    while (eldestFirst.hasNext()) {
      Entry entry = eldestFirst.next().getValue();
      if (now - entry.lastUsed < idleNanos) {
        return;
      }
      sessionChars -= entry.history.chars();
      eldestFirst.remove();
    }
  }

  private void evictEldest() {
    Iterator<Map.Entry<String, Entry>> eldestFirst = bySession.entrySet().iterator();
    sessionChars -= eldestFirst.next().getValue().history.chars();
    eldestFirst.remove();
  }

  private static String key(String session) {
    return session == null ? "" : session;
  }
}
