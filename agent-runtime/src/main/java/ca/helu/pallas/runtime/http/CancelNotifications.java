package ca.helu.pallas.runtime.http;

import com.fasterxml.jackson.databind.JsonNode;
import jakarta.servlet.http.HttpServletRequest;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The edge's part in cancellation (docs/runtime.md, "Deadlines and cancellation"). The MCP SDK
 * (2.1) registers no handler for {@code notifications/cancelled} (it logs the whole notification at
 * WARN and does nothing) and does not give a tool handler the JSON-RPC id of its call, so the edge
 * does both: it notes each request's id on the request (the transport's context extractor passes it
 * on to the call), and acts on {@code notifications/cancelled} itself (McpEdgeFilter answers every
 * client notification but initialized).
 */
final class CancelNotifications {
  private static final Logger LOG = LoggerFactory.getLogger(CancelNotifications.class);
  static final String METHOD = "notifications/cancelled";

  private CancelNotifications() {}

  /** Notes a request's JSON-RPC id on it, for the call it starts to be cancelled by. */
  static void noteId(HttpServletRequest request, JsonNode id) {
    String key = CallCancels.key(id);
    if (key != null) {
      request.setAttribute(CallCancels.REQUEST_ID, key);
    }
  }

  /**
   * {@code notifications/cancelled} on a session (answered 202 by the edge whatever it names): the
   * call it names stops; an unknown or finished one is ignored quietly, as the specification asks.
   */
  static void cancel(CallCancels calls, String session, JsonNode requestId) {
    String id = CallCancels.key(requestId);
    boolean stopped = id != null && calls.cancel(session, id);
    LOG.debug("notifications/cancelled: {}", stopped ? "a call stopped" : "no such call in flight");
  }
}
