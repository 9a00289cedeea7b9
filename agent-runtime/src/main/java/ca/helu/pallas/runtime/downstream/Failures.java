package ca.helu.pallas.runtime.downstream;

import ca.helu.pallas.runtime.Causes;
import io.modelcontextprotocol.spec.McpError;
import io.modelcontextprotocol.spec.McpTransportException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpConnectTimeoutException;
import java.time.Duration;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the model and the logs are told about a failed downstream call: classified by exception
 * type, never by an SDK's message text, and bounded, since a server's garbage can be megabytes
 * (docs/runtime.md, "Errors callers see").
 */
final class Failures {
  private static final Logger LOG = LoggerFactory.getLogger(Failures.class);

  /** The most of a server's own text (a JSON-RPC error message) passed on. */
  static final int MAX_SERVER_TEXT = 500;

  private Failures() {}

  static String describe(Throwable e, Duration timeout) {
    if (Causes.find(e, DownstreamException.class).orElse(null) instanceof DownstreamException d) {
      return d.getMessage();
    }
    if (Causes.find(e, McpError.class).orElse(null) instanceof McpError mcp) {
      return "error from server: " + bounded(mcp.getMessage());
    }
    if (Causes.any(e, HttpConnectTimeoutException.class)) {
      return "unreachable (connect timed out)";
    }
    if (Causes.any(e, TimeoutException.class)) {
      return "timed out after " + timeout.toSeconds() + "s";
    }
    if (Causes.any(e, ConnectException.class)) {
      return "unreachable (connection refused)";
    }
    // the SDK's transport reports what it cannot read (not JSON, not JSON-RPC, an unknown content
    // type, an answer over its size limit) as McpTransportException, or IllegalArgumentException
    // for JSON that is no JSON-RPC message; its message quotes the server's answer, so it stays out
    if (Causes.any(e, McpTransportException.class, IllegalArgumentException.class)) {
      return "answered something that is not a valid MCP message";
    }
    if (Causes.find(e, IOException.class).orElse(null) instanceof IOException io) {
      return "the connection failed (" + bounded(messageOf(Causes.root(io))) + ")";
    }
    // anything else is an error of the MCP client itself, whose message may name its internals
    LOG.info("unclassified downstream failure: {}", bounded(String.valueOf(Causes.root(e))));
    return "failed (an unexpected error in the MCP client; the agent's log has it)";
  }

  private static String messageOf(Throwable t) {
    String message = t.getMessage();
    return message == null || message.isBlank() ? "no detail" : message;
  }

  /** One line of at most {@link #MAX_SERVER_TEXT} characters. */
  static String bounded(String text) {
    if (text == null) {
      return "";
    }
    String line = text.replaceAll("[\\p{Cntrl}&&[^\t]]+", " ").strip();
    return line.length() <= MAX_SERVER_TEXT ? line : line.substring(0, MAX_SERVER_TEXT) + "…";
  }
}
