package ca.helu.pallas.runtime.downstream;

/**
 * The server answered 404 (or 400, as some servers do) to a request on our MCP session: it no
 * longer knows the session, so the request was not processed. The session is retired and later
 * calls open a new one, where {@link McpToolServer} sends the refused request once more.
 */
public final class SessionGoneException extends DownstreamException {
  public SessionGoneException(int status) {
    super(
        "the server no longer knows our MCP session (HTTP "
            + status
            + "); later calls use a new session");
  }
}
