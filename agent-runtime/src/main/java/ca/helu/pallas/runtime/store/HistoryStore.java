package ca.helu.pallas.runtime.store;

import ca.helu.pallas.api.InstanceScope;
import java.util.Optional;

/**
 * Where the conversation histories of a process's agents live (docs/runtime.md, "Conversations"):
 * in its memory by default, or in PostgreSQL, shared by every replica and surviving restarts.
 */
public interface HistoryStore extends AutoCloseable {
  /**
   * The histories of one agent, for the agent's scope (never {@link InstanceScope#REQUEST}, which
   * keeps none).
   */
  AgentHistories forAgent(String agent, InstanceScope scope, HistoryBounds bounds);

  /**
   * Where the agents' MCP sessions and their streams' events go with this store: the same database,
   * so that every replica serving these histories serves their sessions too (docs/runtime.md,
   * "Sessions"); this process's memory for the memory store. Called once.
   */
  default SessionStores sessionStores() {
    return SessionStores.inMemory();
  }

  /**
   * Whether every replica of an agent reads and writes the same histories and sessions here, so
   * that any of them can serve a call another would (PostgreSQL), or only this process (memory).
   */
  default boolean shared() {
    return false;
  }

  /** What the store is, for logs and health: "memory", or the database's host, port and name. */
  String describe();

  /**
   * Why the store cannot be used now, in words naming it (never its credentials); empty while it
   * works (docs/runtime.md, "When the conversation store fails").
   */
  default Optional<String> problem() {
    return Optional.empty();
  }

  @Override
  void close();
}
