package ca.helu.pallas.runtime.mcp;

import ca.helu.pallas.api.InstanceScope;
import ca.helu.pallas.runtime.auth.Caller;
import ca.helu.pallas.runtime.loop.TurnSlot;
import ca.helu.pallas.runtime.store.AgentHistories;
import ca.helu.pallas.runtime.store.StoreException;
import dev.langchain4j.data.message.ChatMessage;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An agent's conversations by instance scope (docs/runtime.md, "Conversations and concurrency"):
 * one for a shared agent (one per caller with inbound authentication on), one per MCP session for
 * connection scope (each session kept to its caller at the edge), none for request. Their histories
 * are in the agent's {@link AgentHistories}; the order of this process's turns on each is kept
 * here, by one {@link TurnSlot} per conversation with calls running or queued.
 */
final class Conversations {
  private static final Logger LOG = LoggerFactory.getLogger(Conversations.class);

  private static final class Slot {
    final TurnSlot slot = new TurnSlot();
    int users;
  }

  private final InstanceScope scope;
  private final AgentHistories histories;
  private final Map<String, Slot> slots = new HashMap<>(); // guarded by itself

  Conversations(InstanceScope scope, AgentHistories histories) {
    this.scope = scope;
    this.histories = histories;
  }

  AgentHistories histories() {
    return histories;
  }

  /**
   * The conversation a call of {@code sessionId} by {@code caller} continues: the session's, or a
   * shared agent's one (null), or with inbound authentication a shared agent's one of this caller,
   * so that no caller reads or continues another's (issue 18 §2). A session an agent of the fleet
   * opened carries all of its callers' calls: each of them has a conversation of their own in it
   * (docs/runtime.md, "Agents calling agents").
   *
   * @param caller the authenticated caller, or null (no inbound authentication)
   */
  String conversationOf(String sessionId, Caller caller) {
    if (scope == InstanceScope.REQUEST) {
      throw new IllegalStateException("request scope keeps no history");
    }
    if (scope == InstanceScope.SHARED) {
      return caller == null ? null : "caller:" + caller.name();
    }
    return caller == null || caller.via() == null
        ? sessionId
        : sessionId + " caller:" + caller.name();
  }

  /**
   * The turn slot of a conversation, for one call; the call gives it back with {@link #leave} once
   * its turn is over, so a session's slot goes with its last call.
   */
  TurnSlot join(String conversation) {
    synchronized (slots) {
      Slot s = slots.computeIfAbsent(key(conversation), k -> new Slot());
      s.users++;
      return s.slot;
    }
  }

  void leave(String conversation) {
    synchronized (slots) {
      Slot s = slots.get(key(conversation));
      if (s != null && --s.users == 0) {
        slots.remove(key(conversation));
      }
    }
  }

  /** The history the history prompt shows: empty for request scope. */
  List<ChatMessage> existing(String sessionId, Caller caller) throws StoreException {
    if (scope == InstanceScope.REQUEST) {
      return List.of();
    }
    return histories.read(conversationOf(sessionId, caller));
  }

  /** Deletes a session's history (the client deleted the session). */
  void forget(String sessionId) {
    if (scope != InstanceScope.CONNECTION || sessionId == null) {
      return;
    }
    try {
      histories.delete(sessionId);
    } catch (StoreException e) {
      // the store's own time to live removes it later (docs/runtime.md, "Conversations")
      LOG.warn("the history of a deleted session stays until it expires: {}", e.getMessage());
    }
  }

  /** This process closed a session (idle, or making room for another). */
  void closed(String sessionId) {
    if (scope == InstanceScope.CONNECTION && sessionId != null) {
      histories.closed(sessionId);
    }
  }

  private static String key(String conversation) {
    return conversation == null ? "" : conversation;
  }
}
