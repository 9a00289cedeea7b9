package ca.helu.pallas.runtime.http;

import com.fasterxml.jackson.databind.JsonNode;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The edge's part in cancellation (docs/runtime.md, "Deadlines and cancellation"). The MCP SDK
 * (2.1) registers no handler for {@code notifications/cancelled} (it logs the whole notification at
 * WARN and does nothing) and does not give a tool handler the JSON-RPC id of its call, so the edge
 * does both: it notes each request's id on the request (the transport's context extractor passes it
 * on to the call), and answers {@code notifications/cancelled} itself.
 */
final class CancelNotifications {
  private static final Logger LOG = LoggerFactory.getLogger(CancelNotifications.class);
  static final String METHOD = "notifications/cancelled";

  private CancelNotifications() {}

  /**
   * For a message about to be passed to the transport: a request's id is noted on the request;
   * {@code notifications/cancelled} on a session is answered here, 202 whatever it names (an
   * unknown or finished call is ignored quietly, as the specification asks). True when the message
   * was answered here.
   */
  static boolean answered(
      CallCancels calls,
      HttpServletRequest request,
      HttpServletResponse response,
      JsonNode message) {
    String method = message.path("method").asText(null);
    if (method != null && message.has("id")) {
      String id = CallCancels.key(message.get("id"));
      if (id != null) {
        request.setAttribute(CallCancels.REQUEST_ID, id);
      }
      return false;
    }
    String session = request.getHeader("Mcp-Session-Id");
    if (!METHOD.equals(method) || session == null) {
      return false; // without a session the transport refuses it as any other notification
    }
    String id = CallCancels.key(message.path("params").get("requestId"));
    boolean stopped = id != null && calls.cancel(session, id);
    LOG.debug("notifications/cancelled: {}", stopped ? "a call stopped" : "no such call in flight");
    response.setStatus(202);
    return true;
  }
}
