package ca.helu.pallas.runtime.mcp;

import ca.helu.pallas.api.InstanceScope;
import ca.helu.pallas.runtime.loop.Conversation;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Conversation histories by instance scope: one for a shared agent, one per MCP session for
 * connection scope (the least recently used are forgotten past a bound), none kept for request.
 */
final class Conversations {
  static final int MAX_SESSIONS = 10_000;

  private final InstanceScope scope;
  private final Conversation shared = new Conversation();
  private final Map<String, Conversation> bySession =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Conversation> eldest) {
          return size() > MAX_SESSIONS;
        }
      };

  Conversations(InstanceScope scope) {
    this.scope = scope;
  }

  /** The history a call continues (request scope keeps none, so callers never ask). */
  Conversation forCall(String sessionId) {
    return switch (scope) {
      case SHARED -> shared;
      case REQUEST -> throw new IllegalStateException("request scope keeps no history");
      case CONNECTION -> {
        synchronized (bySession) {
          yield bySession.computeIfAbsent(
              sessionId == null ? "" : sessionId, k -> new Conversation());
        }
      }
    };
  }

  /** The history the history prompt shows; empty for request scope. */
  Optional<Conversation> existing(String sessionId) {
    return switch (scope) {
      case SHARED -> Optional.of(shared);
      case REQUEST -> Optional.empty();
      case CONNECTION -> {
        synchronized (bySession) {
          yield Optional.ofNullable(bySession.get(sessionId == null ? "" : sessionId));
        }
      }
    };
  }
}
