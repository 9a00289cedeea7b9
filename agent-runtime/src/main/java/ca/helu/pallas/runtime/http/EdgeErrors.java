package ca.helu.pallas.runtime.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How the edge refuses (docs/runtime.md, "Errors callers see"): every refusal leaves as a JSON-RPC
 * error object with the request's id and a message of ours, never a serialized exception, class
 * name or library message.
 */
final class EdgeErrors {
  private static final Logger LOG = LoggerFactory.getLogger(EdgeErrors.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  static final int INVALID_REQUEST = McpEnvelope.INVALID_REQUEST;
  static final int INTERNAL_ERROR = -32603;

  /** The code for a bound of {@link EdgeLimits} reached: retry later. */
  static final int UNAVAILABLE = -32000;

  private EdgeErrors() {}

  /** The error for a body over the limit, naming it. */
  static String tooLarge(long maxBodyBytes) {
    return "Payload Too Large: a request body may hold at most "
        + EdgeLimits.mib(maxBodyBytes)
        + " (derived from this agent's memory; docs/runtime.md, Memory)";
  }

  /**
   * The words for what the transport refused: its own (it is ours, and writes a JSON-RPC error in
   * words meant for callers), else a plain one for the status; never the words of a server error.
   */
  static String messageFor(int status, String transportBody) {
    String said = "";
    try {
      said = JSON.readTree(transportBody).path("error").path("message").asText("");
    } catch (IOException | RuntimeException e) {
      // not the transport's JSON (e.g. a container error page)
    }
    if (!said.isEmpty() && (status < 500 || status == 503)) {
      return said;
    }
    return switch (status) {
      case 404 -> "Not Found: no such session; initialize a new one";
      case 405 -> "Method Not Allowed";
      case 413 -> "Payload Too Large";
      default -> status >= 500 ? "Internal error" : "Request refused (HTTP " + status + ")";
    };
  }

  /** 503 with Retry-After: a bound of {@link EdgeLimits} is reached for now. */
  static void unavailable(HttpServletResponse response, JsonNode id, String message)
      throws IOException {
    response.setHeader("Retry-After", "1");
    refuse(response, 503, id, UNAVAILABLE, message);
  }

  static void refuse(HttpServletResponse response, Refusal refusal, JsonNode id)
      throws IOException {
    refuse(response, refusal.status(), id, refusal.code(), refusal.message());
  }

  static void refuse(
      HttpServletResponse response, int status, JsonNode id, int code, String message)
      throws IOException {
    if (status == 500) {
      LOG.warn("MCP transport failed a request: {}", message);
    } else {
      LOG.debug("refused an MCP request ({}): {}", status, message);
    }
    ObjectNode error = JsonNodeFactory.instance.objectNode();
    error.put("jsonrpc", "2.0");
    error.set("id", id);
    error.putObject("error").put("code", code).put("message", message);
    byte[] body = JSON.writeValueAsBytes(error);
    response.resetBuffer();
    response.setStatus(status);
    response.setContentType("application/json");
    response.setCharacterEncoding("UTF-8");
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
    response.getOutputStream().flush();
  }

  /** A method name from the client, for a message: bounded and plain, or "(unusual)". */
  static String safe(String method) {
    return method.length() > 64
            || !method.chars().allMatch(c -> Character.isLetter(c) || c == '/' || c == '_')
        ? "(unusual)"
        : method;
  }
}
