package ca.helu.pallas.api;

import com.fasterxml.jackson.annotation.JsonValue;

/** Whose conversation a call continues (fast-agent's instance scopes). */
public enum InstanceScope {
  /** One history for the agent; concurrent calls are served one after another. */
  SHARED,
  /** One history per MCP session. */
  CONNECTION,
  /** No history kept: every call starts afresh. */
  REQUEST;

  @JsonValue
  public String wireName() {
    return name().toLowerCase(java.util.Locale.ROOT);
  }
}
