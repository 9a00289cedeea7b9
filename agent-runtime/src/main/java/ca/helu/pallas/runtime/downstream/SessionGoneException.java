package ca.helu.pallas.runtime.downstream;

/**
 * The server answered 404 (or 400, as some servers do) to a request on our MCP session: it no
 * longer knows the session, so the request was not processed. The session is retired and later
 * calls open a new one; re-sending the failed call there would be safe (issue 17).
 */
public final class SessionGoneException extends DownstreamException {
  public SessionGoneException(int status) {
    super(
        "the server no longer knows our MCP session (HTTP "
            + status
            + "); later calls use a new session");
  }
}
