package ca.helu.pallas.runtime.store;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Where the protocol state of MCP sessions is kept, so that any replica of an agent, and the pods
 * that replace them, can serve a session another one opened (docs/runtime.md, "Sessions"). Small
 * and storage-neutral: ids, strings (the initialize request as JSON) and instants, so that it maps
 * onto one table. Sessions are kept per agent: one agent never serves another's session.
 */
public interface SessionStore {
  /**
   * One session as stored.
   *
   * @param initialize the client's initialize request's params, as JSON (protocol version, client
   *     capabilities, client info)
   * @param protocolVersion the version the server answered with
   * @param caller the address of the client that opened the session (room is made for a new session
   *     by closing the same address's idle ones first)
   * @param owner the caller the session belongs to, with inbound authentication (docs/runtime.md,
   *     "Inbound authentication"); null until a caller with a token uses it
   */
  record StoredSession(
      String agent,
      String id,
      String initialize,
      String protocolVersion,
      String caller,
      String owner,
      Instant created,
      Instant lastUsed) {}

  /** Keeps a new session. */
  void save(StoredSession session);

  /** The session, if kept. */
  Optional<StoredSession> find(String agent, String id);

  /** Notes a use of the session; false when it is not kept (deleted or expired). */
  boolean touch(String agent, String id, Instant now);

  /**
   * Gives an unowned session to {@code owner}: the owner the session has afterwards (its earlier
   * one when it had one, so that of two callers claiming it at once on two replicas one wins); null
   * when the session is not kept or the store failed.
   */
  String claim(String agent, String id, String owner);

  /** Forgets the session. */
  void delete(String agent, String id);

  /** Forgets the agent's sessions last used before {@code cutoff}; their ids. */
  List<String> expire(String agent, Instant cutoff);
}
