package ca.helu.pallas.runtime.serve;

/**
 * What a call that reaches an agent while it drains gets (docs/runtime.md, "Errors callers see").
 * In every mode the calls in progress finish, until the drain's deadline, and every response closes
 * its connection.
 */
public enum DrainMode {
  /** One local process, no other replica: a new call gets the tool error "shutting down; retry". */
  REFUSE,
  /**
   * An agent pod whose sessions live in its own memory: a call on an existing session is answered
   * 404 "session gone" and an initialize 503, so the client starts a new session on a ready pod.
   */
  HAND_OVER,
  /**
   * An agent pod whose sessions and conversations are in a store every replica shares: it serves
   * what still reaches it, as any replica would, and the closed connection sends the client's next
   * request to a ready pod.
   */
  SERVE
}
