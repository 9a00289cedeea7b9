package ca.helu.pallas.runtime.http;

import ca.helu.pallas.runtime.auth.AuthFailure;
import ca.helu.pallas.runtime.auth.Caller;
import ca.helu.pallas.runtime.auth.InboundAuth;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Set;

/**
 * The edge's authentication (docs/runtime.md, "Inbound authentication"): a request with an
 * Authorization header is authenticated before anything else is looked at, and its caller set as
 * the request's {@link Caller#ATTRIBUTE}; one without is refused, unless {@code openHealth} lets it
 * do what a health poller needs (see {@link #open}). A refusal is 401 or 403 with the
 * WWW-Authenticate header of RFC 6750 §3 pointing at the agent's Protected Resource Metadata (RFC
 * 9728 §5.1) and a JSON-RPC error in our words; neither ever quotes the token. A token in the query
 * string is never read (RFC 6750 §2.3 is not supported: query strings end up in logs).
 */
final class EdgeAuth {
  /** JSON-RPC error code of a refusal for credentials (the MCP specification names none). */
  static final int UNAUTHORIZED = -32001;

  /** Methods a client without a token may call with {@code openHealth}; tools/call is special. */
  private static final Set<String> OPEN_METHODS =
      Set.of("initialize", "ping", "tools/list", "resources/list");

  private final InboundAuth auth;

  EdgeAuth(InboundAuth auth) {
    this.auth = auth;
  }

  /**
   * Whether this request's caller (or a request without a token) may use {@code session} ({@link
   * EdgeSessions#admits}: on every replica, a session is the caller's who opened it); one the agent
   * does not keep is left to the transport, which answers 404.
   */
  boolean mayUse(HttpServletRequest request, String session, EdgeSessions sessions) {
    return sessions.admits(session, Caller.nameOf(request));
  }

  /**
   * Authenticates a request that carries an Authorization header, or refuses one without when
   * nothing is open; true when it may go on (a request without a token, or an observer's, then
   * still has its method checked by {@link #allows}).
   */
  boolean admit(HttpServletRequest request, HttpServletResponse response) throws IOException {
    String authorization = request.getHeader("Authorization");
    if (authorization == null && auth.openHealth()) {
      return true;
    }
    try {
      // an observer (the operator, the registry) is no caller: it may do what a client without a
      // token may (allows)
      auth.authenticate(authorization, request::getHeader)
          .ifPresent(caller -> request.setAttribute(Caller.ATTRIBUTE, caller));
      return true;
    } catch (AuthFailure f) {
      refuse(response, f, NullNode.instance);
      return false;
    }
  }

  /**
   * Whether a POST of {@code envelope} may go on: it has a caller, or it is one of what a client
   * without a token may do ({@code openHealth}); otherwise it is refused here with 401.
   */
  boolean allows(HttpServletRequest request, HttpServletResponse response, McpEnvelope envelope)
      throws IOException {
    if (request.getAttribute(Caller.ATTRIBUTE) != null || open(envelope)) {
      return true;
    }
    refuse(
        response,
        new AuthFailure(
            AuthFailure.Code.NONE,
            "a bearer token is required for "
                + (envelope.method().equals("tools/call")
                    ? "this tool"
                    : EdgeErrors.safe(envelope.method()))
                + " (without one, only initialize, ping, tools/list, resources/list, "
                + String.join(", ", auth.openTools())
                + " and the health, tools and servers resources)"),
        envelope.id());
    return false;
  }

  /**
   * What a client without a token may do with {@code openHealth}, and an observer (the operator,
   * the registry: {@link InboundAuth#authenticate}) whatever {@code openHealth} says: open a
   * session and call get_health (the registry: its discovery tools, {@link InboundAuth#openTools})
   * or read and subscribe to the health resource (the same answer) and to the tools and servers
   * resources the registry indexes, with what MCP clients do on the way (notifications, ping,
   * tools/list, which the Python SDK calls before a tool call to learn its output schema,
   * resources/list, and answers to the server's own requests on the session, its keep-alive pings).
   */
  private boolean open(McpEnvelope envelope) {
    if (envelope.isResponse()) {
      return true;
    }
    String method = envelope.method();
    return OPEN_METHODS.contains(method)
        || envelope.isNotification()
        || method.equals("tools/call") && auth.openTools().contains(envelope.tool())
        || envelope.isOpenResource();
  }

  private void refuse(HttpServletResponse response, AuthFailure failure, JsonNode id)
      throws IOException {
    StringBuilder challenge = new StringBuilder("Bearer resource_metadata=\"");
    challenge.append(auth.metadataUrl()).append('"');
    if (!auth.scope().isEmpty()) {
      challenge.append(", scope=\"").append(auth.scope()).append('"');
    }
    AuthFailure.Code code = failure.code();
    if (code.error() != null) {
      challenge.append(", error=\"").append(code.error()).append('"');
      challenge
          .append(", error_description=\"")
          .append(failure.getMessage().replace('"', '\''))
          .append('"');
    }
    response.setHeader("WWW-Authenticate", challenge.toString());
    EdgeErrors.refuse(
        response,
        code.status(),
        id,
        UNAUTHORIZED,
        (code.status() == 403 ? "Forbidden: " : "Unauthorized: ") + failure.getMessage());
  }
}
