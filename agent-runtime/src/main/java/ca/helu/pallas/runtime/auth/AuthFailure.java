package ca.helu.pallas.runtime.auth;

/**
 * A request refused for its credentials (docs/runtime.md, "Inbound authentication"): 401 with
 * {@code invalid_token} (or no error code when no token came), or 403 with {@code
 * insufficient_scope}, as RFC 6750 §3.1 names them. The description is ours and never quotes the
 * token.
 */
public final class AuthFailure extends Exception {
  /** RFC 6750's error codes, or none (a request without a token). */
  public enum Code {
    NONE(401, null),
    INVALID_TOKEN(401, "invalid_token"),
    INSUFFICIENT_SCOPE(403, "insufficient_scope");

    private final int status;
    private final String error;

    Code(int status, String error) {
      this.status = status;
      this.error = error;
    }

    public int status() {
      return status;
    }

    /** The {@code error} attribute of WWW-Authenticate, or null. */
    public String error() {
      return error;
    }
  }

  private final Code code;

  public AuthFailure(Code code, String description) {
    super(description, null, false, false);
    this.code = code;
  }

  public Code code() {
    return code;
  }
}
