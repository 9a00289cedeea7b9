package ca.helu.pallas.runtime.http;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The calls in flight a client may cancel with {@code notifications/cancelled} (docs/runtime.md,
 * "Deadlines and cancellation"), told by the edge ({@link CancelNotifications}).
 */
public interface CallCancels {
  /** The request attribute holding a request's JSON-RPC id, as {@link #key}. */
  String REQUEST_ID = "pallas.jsonrpc-id";

  CallCancels NONE = (session, requestId) -> false;

  /**
   * Stops the call with this JSON-RPC id ({@link #key}) on this MCP session, if one is in flight;
   * true if one was.
   */
  boolean cancel(String session, String requestId);

  /**
   * A JSON-RPC id as a key: a string and an integer of the same digits are different ids. Null for
   * anything else, which is no id.
   */
  static String key(JsonNode id) {
    if (id == null) {
      return null;
    }
    if (id.isTextual()) {
      return "s:" + id.asText();
    }
    return id.isIntegralNumber() ? "n:" + id.bigIntegerValue() : null;
  }
}
