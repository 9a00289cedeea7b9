package ca.helu.pallas.runtime.http;

import jakarta.servlet.http.HttpServletRequest;
import java.util.function.BooleanSupplier;

/**
 * What the edge does while the server drains (docs/runtime.md, "Errors callers see"): every
 * response closes its connection, so a client's next request opens a new one, which a Kubernetes
 * Service routes to a ready replica (this one left the endpoints before its drain began). With
 * {@code handOverSessions} (agent pods, `serve --cluster`) a new call on an existing session is
 * answered 404, the specification's "session gone", which makes MCP clients initialize a new
 * session (Daedalus does), and a new initialize is answered 503: no call is refused with an error
 * the client cannot recover from. Without it (one local process, no other replica) a new call gets
 * the tool error "shutting down; retry" (TurnHandler).
 *
 * @param active whether the server is draining
 */
public record Drain(BooleanSupplier active, boolean handOverSessions) {
  public static final Drain NEVER = new Drain(() -> false, false);

  /** JSON-RPC's implementation-defined server error: this server is shutting down. */
  static final int SHUTTING_DOWN = -32000;

  boolean draining() {
    return active.getAsBoolean();
  }

  /**
   * While draining with hand-over: how this request is sent to another replica, or null for one
   * this server still answers (notifications, responses, requests outside a session's calls, and
   * every request when not handing over).
   */
  Refusal handOver(HttpServletRequest request, McpEnvelope envelope) {
    if (!handOverSessions || !draining() || !envelope.hasId() || envelope.isResponse()) {
      return null;
    }
    if (envelope.method().equals("initialize")) {
      return new Refusal(
          503,
          SHUTTING_DOWN,
          "Service Unavailable: this replica is shutting down; retry, and the Service routes"
              + " the new connection to a ready one");
    }
    if (request.getHeader("Mcp-Session-Id") != null) {
      return new Refusal(
          404,
          SHUTTING_DOWN,
          "Not Found: this replica is shutting down and its sessions end with it;"
              + " initialize a new session");
    }
    return null;
  }
}
