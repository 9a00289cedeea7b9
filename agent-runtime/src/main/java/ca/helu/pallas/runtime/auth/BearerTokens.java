package ca.helu.pallas.runtime.auth;

import java.util.Optional;

/** Reading a bearer token from an Authorization header (RFC 6750 §2.1), bounded in length. */
final class BearerTokens {
  /**
   * The longest token looked at. Real access tokens are a few kilobytes (Keycloak's about 1.5 KB);
   * a longer one is refused before it is parsed, whatever it holds.
   */
  static final int MAX_LENGTH = 16 * 1024;

  private BearerTokens() {}

  /**
   * The token of an {@code Authorization: Bearer} header; empty when there is no header.
   *
   * @throws AuthFailure for another scheme, an empty token or one over {@link #MAX_LENGTH}
   */
  static Optional<String> of(String authorization) throws AuthFailure {
    if (authorization == null || authorization.isBlank()) {
      return Optional.empty();
    }
    if (!authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
      throw new AuthFailure(
          AuthFailure.Code.INVALID_TOKEN, "the Authorization header is not Bearer");
    }
    String token = authorization.substring(7).strip();
    if (token.isEmpty()) {
      throw new AuthFailure(AuthFailure.Code.INVALID_TOKEN, "the bearer token is empty");
    }
    if (token.length() > MAX_LENGTH) {
      throw new AuthFailure(
          AuthFailure.Code.INVALID_TOKEN,
          "the bearer token is longer than " + MAX_LENGTH + " characters");
    }
    return Optional.of(token);
  }

  /**
   * The token of the Authorization header, which must be there.
   *
   * @throws AuthFailure as {@link #of}, and with no error code (RFC 6750 §3.1) when there is none
   */
  static String required(String authorization) throws AuthFailure {
    return of(authorization)
        .orElseThrow(() -> new AuthFailure(AuthFailure.Code.NONE, "a bearer token is required"));
  }
}
