package ca.helu.pallas.runtime.http;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which caller each MCP session belongs to, with inbound authentication on (docs/runtime.md,
 * "Inbound authentication"): the caller who opened it, or, for a session opened without a token
 * (openHealth), the first caller who uses it with one. Another caller, or a request without a
 * token, gets 404 on an owned session, as for a session that does not exist: its conversation, its
 * streams and its deletion are its owner's alone. Kept in this process only: on another replica
 * that shares the session store, the first caller with a token claims it.
 */
public final class SessionOwners {
  private final Map<String, String> owners = new ConcurrentHashMap<>();

  /**
   * Whether {@code caller} (null: no token) may use {@code session}; a caller claims a session that
   * has no owner yet.
   */
  boolean admits(String session, String caller) {
    if (caller == null) {
      return !owners.containsKey(session);
    }
    String owner = owners.putIfAbsent(session, caller);
    return owner == null || owner.equals(caller);
  }

  /** The session ended (deleted, idle or evicted): its owner is forgotten. */
  public void forget(String session) {
    if (session != null) {
      owners.remove(session);
    }
  }
}
