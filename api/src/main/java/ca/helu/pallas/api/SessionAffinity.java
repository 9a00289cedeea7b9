package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonValue;

/**
 * The session affinity of an agent's Service (Kubernetes' own values). Any replica serves any MCP
 * session (docs/runtime.md, "Sessions"): affinity only spares a replica re-creating a session from
 * the store when a client moves between pods.
 */
public enum SessionAffinity {
  /** Each connection to any ready pod (Kubernetes' default). */
  NONE("None"),
  /** A client address's connections to one pod while it is ready. */
  CLIENT_IP("ClientIP");

  private final String wireName;

  SessionAffinity(String wireName) {
    this.wireName = wireName;
  }

  @JsonValue
  public String wireName() {
    return wireName;
  }
}
