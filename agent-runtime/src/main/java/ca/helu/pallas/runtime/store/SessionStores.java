package ca.helu.pallas.runtime.store;

/**
 * Where an agent's MCP sessions and the events of their resumable streams are kept: shared by the
 * replicas of an agent, so that any of them serves any session (docs/runtime.md, "Sessions").
 */
public record SessionStores(SessionStore sessions, EventStore events) {
  /** Both in this process's memory: serve's default. */
  public static SessionStores inMemory() {
    return new SessionStores(new InMemorySessionStore(), new InMemoryEventStore());
  }
}
