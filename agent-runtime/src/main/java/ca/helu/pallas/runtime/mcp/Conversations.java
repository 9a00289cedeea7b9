package ca.helu.pallas.runtime.mcp;

import ca.helu.pallas.api.InstanceScope;
import ca.helu.pallas.runtime.loop.Conversation;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Conversation histories by instance scope: one for a shared agent, one per MCP session for
 * connection scope, none kept for request. Memory is bounded (docs/runtime.md, "Conversations and
 * concurrency"): each history by its budget, a session's history is forgotten when the session is
 * deleted, closed or has been idle for the idle timeout, and the least recently used sessions go
 * first past the agent's share of the process's history limit (docs/runtime.md, "Memory"; the
 * number of sessions is capped at the edge: {@link McpSessions}).
 */
final class Conversations {
  private static final class Entry {
    final Conversation conversation;
    long lastUsed;

    Entry(Conversation conversation) {
      this.conversation = conversation;
    }
  }

  private final InstanceScope scope;
  private final long budgetChars;
  private final long maxTotalChars;
  private final long idleNanos;
  private final LongSupplier clock;
  private final Conversation shared;
  // in order of last call, the least recently used first; guarded by itself
  private final LinkedHashMap<String, Entry> bySession = new LinkedHashMap<>();
  private long sessionChars;

  /**
   * @param budgetChars the most one history holds (from the model's context window)
   * @param maxTotalChars the most every history of the agent holds together
   */
  Conversations(
      InstanceScope scope,
      long budgetChars,
      long maxTotalChars,
      Duration idleExpiry,
      LongSupplier clock) {
    this.scope = scope;
    this.budgetChars = budgetChars;
    this.maxTotalChars = maxTotalChars;
    this.idleNanos = idleExpiry.toNanos();
    this.clock = clock;
    this.shared = new Conversation(budgetChars);
  }

  /** The history a call continues (request scope keeps none, so callers never ask). */
  Conversation forCall(String sessionId) {
    return switch (scope) {
      case SHARED -> shared;
      case REQUEST -> throw new IllegalStateException("request scope keeps no history");
      case CONNECTION -> {
        synchronized (bySession) {
          long now = clock.getAsLong();
          expire(now);
          Entry entry = bySession.remove(key(sessionId));
          if (entry == null) {
            entry = new Entry(new Conversation(budgetChars));
          }
          entry.lastUsed = now;
          bySession.put(key(sessionId), entry);
          yield entry.conversation;
        }
      }
    };
  }

  /** Accounts for a turn appended to {@code conversation}; evicts past the agent's total. */
  void appended(String sessionId, Conversation conversation, long deltaChars) {
    if (scope != InstanceScope.CONNECTION) {
      return;
    }
    synchronized (bySession) {
      Entry entry = bySession.get(key(sessionId));
      if (entry == null || entry.conversation != conversation) {
        return; // evicted meanwhile: its characters were counted out then
      }
      sessionChars += deltaChars;
      while (sessionChars > maxTotalChars && bySession.size() > 1) {
        evictEldest();
      }
    }
  }

  /** Forgets a session's history (the client deleted the session). */
  void forget(String sessionId) {
    synchronized (bySession) {
      Entry entry = bySession.remove(key(sessionId));
      if (entry != null) {
        sessionChars -= entry.conversation.chars();
      }
    }
  }

  /** The history the history prompt shows; empty for request scope. */
  Optional<Conversation> existing(String sessionId) {
    return switch (scope) {
      case SHARED -> Optional.of(shared);
      case REQUEST -> Optional.empty();
      case CONNECTION -> {
        synchronized (bySession) {
          expire(clock.getAsLong());
          Entry entry = bySession.get(key(sessionId));
          yield Optional.ofNullable(entry == null ? null : entry.conversation);
        }
      }
    };
  }

  /** Histories held: sessions for connection scope, 1 for shared, 0 for request. */
  int sessions() {
    return switch (scope) {
      case SHARED -> 1;
      case REQUEST -> 0;
      case CONNECTION -> {
        synchronized (bySession) {
          expire(clock.getAsLong());
          yield bySession.size();
        }
      }
    };
  }

  /** Characters held by every history of the agent. */
  long chars() {
    return switch (scope) {
      case SHARED -> shared.chars();
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
      sessionChars -= entry.conversation.chars();
      eldestFirst.remove();
    }
  }

  private void evictEldest() {
    Iterator<Map.Entry<String, Entry>> eldestFirst = bySession.entrySet().iterator();
    sessionChars -= eldestFirst.next().getValue().conversation.chars();
    eldestFirst.remove();
  }

  private static String key(String sessionId) {
    return sessionId == null ? "" : sessionId;
  }
}
